#include "ops/horizontal_sums.h"

#include <vector>

namespace npukit::ops {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// AVX's vhaddps on a and b (8 lanes each): pairs summed within each 128-bit half,
// [a0+a1, a2+a3, b0+b1, b2+b3, a4+a5, a6+a7, b4+b5, b6+b7].
Expr hadd(const Expr& a, const Expr& b) {
  return Shuffle::make({a, b}, {0, 2, 8, 10, 4, 6, 12, 14}) + Shuffle::make({a, b}, {1, 3, 9, 11, 5, 7, 13, 15});
}

}  // namespace

Expr HorizontalSums::visit(const VectorReduce* op) {
  constexpr int lanes = 8;
  if (op->op != VectorReduce::Add || op->type != Float(32, lanes) || op->value.type().lanes() != lanes * lanes) {
    return IRMutator::visit(op);
  }
  const Expr value = mutate(op->value);
  std::vector<Expr> v;
  for (int i = 0; i < lanes; ++i) v.push_back(Shuffle::make_slice(value, i * lanes, 1, lanes));
  // [v0(0123), v1(0123), v2(0123), v3(0123) | v0(4567), ...] and the same for v4..v7.
  const Expr lo = hadd(hadd(v[0], v[1]), hadd(v[2], v[3]));
  const Expr hi = hadd(hadd(v[4], v[5]), hadd(v[6], v[7]));
  ++rewritten;
  // Each vector and each partial sum is named once (lets), as Halide's lowering leaves them.
  return common_subexpression_elimination(Shuffle::make({lo, hi}, {0, 1, 2, 3, 8, 9, 10, 11}) +
                                          Shuffle::make({lo, hi}, {4, 5, 6, 7, 12, 13, 14, 15}));
}

void add_horizontal_sums(Pipeline pipeline, const Target& target) {
  if (target.arch == Target::X86 && !target.has_gpu_feature() && target.natural_vector_size<float>() == 8) {
    pipeline.add_custom_lowering_pass(new HorizontalSums());
  }
}

}  // namespace npukit::ops
