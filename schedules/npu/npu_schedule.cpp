#include "schedules/npu/npu_schedule.h"

#include <algorithm>

#include "npu_schedule_list.h"  // generated: NPUKIT_NPU_SCHEDULES(X), one X(op) per schedule

namespace npukit::schedules::npu {

#define NPUKIT_DECLARE(op) const NpuSchedule& npu_schedule_##op();
NPUKIT_NPU_SCHEDULES(NPUKIT_DECLARE)
#undef NPUKIT_DECLARE

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

const std::vector<NpuSchedule>& npu_schedules() {
  static const std::vector<NpuSchedule> all = [] {
    std::vector<NpuSchedule> v;
#define NPUKIT_LIST(op) v.push_back(npu_schedule_##op());
    NPUKIT_NPU_SCHEDULES(NPUKIT_LIST)
#undef NPUKIT_LIST
    std::sort(v.begin(), v.end(), [](const NpuSchedule& a, const NpuSchedule& b) { return a.op < b.op; });
    return v;
  }();
  return all;
}

const NpuSchedule* find_npu_schedule(const std::string& op) {
  for (const NpuSchedule& s : npu_schedules())
    if (s.op == op) return &s;
  return nullptr;
}

}  // namespace npukit::schedules::npu
