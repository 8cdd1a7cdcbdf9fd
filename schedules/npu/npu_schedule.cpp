// What a schedule's own code calls (also in operator plug-ins' NPU companions); the list of
// schedules is schedules/npu/npu_schedule_list.cpp.
#include "schedules/npu/npu_schedule.h"

namespace npukit::schedules::npu {

void* ExtraInputs::add_tensor(const std::string& name, DType dtype, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<uint8_t>& bytes = storage[name];
  bytes.assign(static_cast<size_t>(n) * dtype_size(dtype), 0);
  tensors[name] = TensorView{bytes.data(), dtype, std::move(shape), {}};
  return bytes.data();
}

Knobs fixed_knobs(const Knobs& knobs) {
  Knobs fixed;
  if (auto it = knobs.find("double_buffer"); it != knobs.end()) fixed[it->first] = it->second;
  return fixed;
}

}  // namespace npukit::schedules::npu
