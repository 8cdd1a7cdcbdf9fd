// The tile granularity of an arch's matrix unit for a dtype: the m, k, n multiples it runs
// unpadded (a cube's m0, k0, n0; a systolic array's rows and columns by dataflow). One
// definition for every schedule that tiles a GEMM (int8_gemm, linear).
#pragma once

#include <cstdint>
#include <vector>

#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct Granule {
  int64_t m = 1, k = 1, n = 1;
};

// {1, 1, 1} where a cube has no shape for `dtype`.
inline Granule matrix_granule(const sim::ArchSpec& arch, sim::Dtype dtype) {
  const sim::MatrixUnit& u = arch.matrix;
  if (u.kind == sim::MatrixKind::cube) {
    auto it = u.shapes.find(dtype);
    if (it == u.shapes.end()) return {};
    return {it->second.m0, it->second.k0, it->second.n0};
  }
  switch (u.dataflow) {  // which GEMM dimensions map onto the array's rows and columns
    case sim::Dataflow::ws: return {1, u.rows, u.cols};
    case sim::Dataflow::os: return {u.rows, 1, u.cols};
    case sim::Dataflow::is: return {u.cols, u.rows, 1};
  }
  return {};
}

// The tile extents a GEMM tile chooser tries along a dim: `full` rounded up to `step`, then
// halved (each rounded up to `step`) down to `step` itself.
inline std::vector<int64_t> tile_halvings(int64_t full, int64_t step) {
  auto round_up = [](int64_t x, int64_t to) { return (x + to - 1) / to * to; };
  std::vector<int64_t> v;
  for (int64_t t = round_up(full, step);; t = round_up(t / 2, step)) {
    v.push_back(t);
    if (t <= step) break;
  }
  return v;
}

}  // namespace npukit::schedules::npu
