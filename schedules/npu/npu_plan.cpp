#include "schedules/npu/npu_plan.h"

#include <cctype>
#include <stdexcept>

namespace npukit::schedules::npu {

void NpuPlan::stage(Halide::Func f, const std::string& buffer, Halide::LoopLevel at, bool double_buffered,
                    bool from_dram, const char* file, int line) {
  f.compute_at(at).store_at(at).store_in(Halide::MemoryType::Heap);
  placements_[f.name()] = Placement{buffer, double_buffered, from_dram, sim::source_loc(file, line)};
}

void NpuPlan::nz(const Halide::Func& f, int64_t row_bytes) {
  auto it = placements_.find(f.name());
  if (it == placements_.end()) throw std::logic_error("NpuPlan::nz: " + f.name() + " is not staged (call stage first)");
  it->second.fractal_row_bytes = row_bytes;
}

void NpuPlan::matrix(const Halide::Func& f, int stage, const std::string& m_var, const std::string& n_var,
                     const std::string& k_var, sim::Dtype dtype, std::vector<Halide::Expr> whole, const char* file,
                     int line) {
  whole.resize(3);
  matrix_.push_back(MatrixRole{f.name(), stage, m_var, n_var, k_var, dtype, std::move(whole), sim::source_loc(file, line)});
}

void NpuPlan::short_runs(const Halide::Func& f, std::string why, const char* file, int line) {
  short_runs_[f.name()] = ShortRuns{std::move(why), sim::source_loc(file, line)};
}

const ShortRuns* NpuPlan::short_runs_of(const std::string& func) const {
  auto it = short_runs_.find(func);
  return it == short_runs_.end() ? nullptr : &it->second;
}

const Placement* NpuPlan::placement(const std::string& func) const {
  auto it = placements_.find(func);
  if (it != placements_.end()) return &it->second;
  // A Tuple-valued Func lowers to one allocation per component: "<func>.0", "<func>.1".
  const size_t dot = func.rfind('.');
  if (dot == std::string::npos || dot + 1 == func.size()) return nullptr;
  for (size_t i = dot + 1; i < func.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(func[i]))) return nullptr;
  it = placements_.find(func.substr(0, dot));
  return it == placements_.end() ? nullptr : &it->second;
}

}  // namespace npukit::schedules::npu
