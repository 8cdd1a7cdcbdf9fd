#include "simulator/cost/compute_cycles.h"

#include <stdexcept>
#include <string>

namespace npukit::sim {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

void require_positive(const char* what, int64_t v) {
  if (v <= 0) throw std::invalid_argument(std::string(what) + " = " + std::to_string(v) + ": must be > 0");
}

}  // namespace

int64_t systolic_gemm_cycles(Dataflow dataflow, int64_t rows, int64_t cols, int64_t m, int64_t n, int64_t k) {
  for (auto [what, v] : {std::pair<const char*, int64_t>{"rows", rows}, {"cols", cols}, {"M", m}, {"N", n}, {"K", k}}) {
    require_positive(what, v);
  }
  switch (dataflow) {
    case Dataflow::ws: return ceil_div(k, rows) * ceil_div(n, cols) * (2 * rows + cols + m - 2) - 1;
    case Dataflow::os: return ceil_div(m, rows) * ceil_div(n, cols) * (rows + cols + k - 2) - 1;
    case Dataflow::is: return ceil_div(k, rows) * ceil_div(m, cols) * (2 * rows + cols + n - 2) - 1;
  }
  throw std::invalid_argument("unknown dataflow");
}

int64_t cube_gemm_cycles(const CubeShape& s, int64_t m, int64_t n, int64_t k) {
  for (auto [what, v] : {std::pair<const char*, int64_t>{"m0", s.m0}, {"k0", s.k0}, {"n0", s.n0}, {"M", m}, {"N", n},
                         {"K", k}}) {
    require_positive(what, v);
  }
  return ceil_div(m, s.m0) * ceil_div(k, s.k0) * ceil_div(n, s.n0);
}

int64_t compute_bound_cycles(int64_t macs, int64_t macs_per_cycle) {
  require_positive("macs_per_cycle", macs_per_cycle);
  if (macs < 0) throw std::invalid_argument("macs = " + std::to_string(macs) + ": must be >= 0");
  return ceil_div(macs, macs_per_cycle);
}

}  // namespace npukit::sim
