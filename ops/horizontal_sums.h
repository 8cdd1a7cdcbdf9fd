// A lowering pass for AVX2's sums across vector lanes.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// Rewrites each vector_reduce(Add) of 64 float lanes into 8 (eight 8-lane vectors, each
// summed to one lane: a transposed reduction, as decode attention's scores end each block)
// as a tree whose shuffles are what AVX's in-lane `vhaddps` computes, then one exchange of
// 128-bit halves. Halide's own lowering halves the vector by even and odd lanes three times,
// which costs LLVM a `vpermpd` after every `vhaddps` to restore the lane order. The sums
// pair the same lanes in the same order ((0+1)+(2+3))+((4+5)+(6+7)), so results are
// bit-identical.
class HorizontalSums : public Halide::Internal::IRMutator {
 public:
  using IRMutator::visit;
  Halide::Expr visit(const Halide::Internal::VectorReduce* op) override;

  int rewritten = 0;  // reductions it rewrote (for tests)
};

// Adds HorizontalSums to `pipeline`'s lowering where `target` is an x86 CPU with 8-lane float
// vectors (AVX, AVX2); other targets keep Halide's lowering.
void add_horizontal_sums(Halide::Pipeline pipeline, const Halide::Target& target);

}  // namespace npukit::ops
