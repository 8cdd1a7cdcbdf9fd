#include "ops/rope.h"

#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

namespace {

// The token loop `t` of `y` split into tasks `to` of up to 8 tokens `ti`, and the angle
// table scheduled in it; returns the number of tasks. Fewer tokens than 8 are one task of
// their own size, run serially: a decode step's token then takes the partitioned loops,
// not a GuardWithIf tail's. GuardWithIf: y may be x (in place), which a ShiftInwards tail
// would read rotated.
Expr split_tokens(ops::RopeAngles& angles, Func y, Var t, Expr tokens, Var to, Var ti, const Target& target) {
  y.split(t, to, ti, min(tokens, 8), TailStrategy::GuardWithIf);
  // In fp64 vectors: left to LLVM, the exp loop became 4-lane ymm code with a vdivpd, 18%
  // of a hot one-token call on Zen 4 (13% now; fp32 half style 0.79 -> 0.72 us hot).
  const int dvec = target.natural_vector_size<double>();
  angles.inv_freq.compute_root().vectorize(angles.i, dvec, TailStrategy::GuardWithIf);
  // Scratch sizes depend on head_dim and rotary_dim, so Halide allocates them on the heap:
  // store_at(to) makes that once per task instead of once per token or head.
  angles.cos_sin.store_at(y, to).compute_at(y, ti).vectorize(angles.i, dvec, TailStrategy::GuardWithIf);
  return (tokens + 7) / 8;
}

}  // namespace

// Tokens in parallel; per token the (cos, sin) table in fp64 vectors, then every head
// rotated in fp32 vectors while the token's rows are in L1.
// `x_f32` is the input widened to fp32. For fp16 storage and the interleaved style it is
// staged per block of two vectors, and so is the fp32 rotation, so that the pair shuffles
// work on fp32 vectors rather than on 16-bit lanes one at a time; the half style reads
// it in place.
void schedule_rope(ops::RopeAngles& angles, ops::Rope& rope, Func x_f32, bool widened, Func y,
                   ops::RopeStyle style, Expr head_dim, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var d = rope.d, h = rope.h, t = rope.t, to{"to"}, ti{"ti"};

  const Expr tasks = split_tokens(angles, y, t, y.output_buffer().dim(2).extent(), to, ti, target);

  if (style == ops::RopeStyle::interleaved) {
    // d itself is the vector index: the pair loads x(2·(d/2)) and x(2·(d/2) + 1) become
    // stride-2 loads (dense loads and a shuffle), the parity select a blend of the
    // deinterleaved halves, and the store one dense vector. Splitting d into (pair,
    // parity) and unrolling parity left two stride-2 stores that Halide 14 could not merge
    // (the ShiftInwards clamp of the parity split and the token split's GuardWithIf `if`
    // sit between them when its interleaving pass runs), so each became 16 scalar stores:
    // 14.3 us instead of 3.5 us at [1, 32, 128] fp32 on the Sapphire Rapids machine.
    // Blocks of two vectors: one vector of output is half a vector of each deinterleaved
    // half (4.2 us instead of 3.5 us). Where head_dim is a multiple of the block, RoundUp
    // (exact then) makes every block start at a known even d, so the parity is known at
    // compile time; ShiftInwards blocks start wherever the last one must.
    Var dout{"dout"}, din{"din"};
    const int block = 2 * vec;
    // fp16 stores one vector per step: LLVM 14 writes a 2-vector fp16 store (<32 x half>
    // without AVX512-FP16) lane by lane with movw (4.0 us instead of 2.2 us).
    const int store = widened ? vec : block;
    parallel_unless_one_task(y, to, tasks, [&](Stage s) {
      s.specialize(head_dim % block == 0).split(d, dout, din, block, TailStrategy::RoundUp).vectorize(din, store);
      s.specialize(head_dim >= block).split(d, dout, din, block, TailStrategy::ShiftInwards).vectorize(din, store);
      s.specialize(head_dim >= vec).split(d, dout, din, vec, TailStrategy::ShiftInwards).vectorize(din);
      s.split(d, dout, din, 1);  // dout exists in every specialization: the stages below live there
    });
    if (widened) {
      // fp16: a block of x is widened to fp32 and rotated into fp32 scratch before the
      // narrowing store, so the pair shuffles work on fp32 lanes. Read in place, the pair
      // loads are stride-2 loads of 16-bit lanes, assembled lane by lane (vpinsrw; 6.0 us
      // instead of 3.8 us); narrowed inside the rotation, the interleave ends up on the
      // 16-bit lanes. Both scratches are L1-resident (LLVM keeps the whole block in zmm
      // registers in the RoundUp case). In the ShiftInwards cases their size depends on
      // the block's parity, so Halide allocates them on the heap per block: slower, and
      // only head_dims that are not a multiple of 2·vec take them.
      x_f32.compute_at(y, dout).vectorize(x_f32.args()[0], vec, TailStrategy::GuardWithIf);
      rope.out.compute_at(y, dout).vectorize(d, block, TailStrategy::GuardWithIf);
    }
  } else {
    rope.out.store_at(y, to).compute_at(y, h).vectorize(d, vec, TailStrategy::GuardWithIf);
    rope.out.update(0).vectorize(rope.r, vec, TailStrategy::GuardWithIf);
    rope.out.update(1).vectorize(rope.r, vec, TailStrategy::GuardWithIf);
    parallel_unless_one_task(y, to, tasks, [&](Stage s) {
      s.specialize(head_dim >= vec).vectorize(d, vec, TailStrategy::ShiftInwards);
    });
  }
}

// The half style on rows seen as two halves (ops::apply_rope_half_rows): tokens in
// parallel, the (cos, sin) table per token, both halves of a vector's pairs in one step:
// each element is loaded and widened once for its two outputs. With the halves as two
// loops, each loop loaded and widened both inputs again (Zen 4, [1, 32, 128] hot, fp16 0.65 ->
// 0.59 us, fp32 0.70 -> 0.56 us).
void schedule_rope_half_rows(ops::RopeAngles& angles, Func y, Expr half, const Target& target) {
  const int vec = target.natural_vector_size<float>();
  Var i = y.args()[0], j = y.args()[1], t = y.args()[3], to{"to"}, ti{"ti"}, io{"io"}, ii{"ii"};
  const Expr tasks = split_tokens(angles, y, t, y.output_buffer().dim(3).extent(), to, ti, target);
  y.bound(j, 0, 2);
  parallel_unless_one_task(y, to, tasks, [&](Stage s) {
    s.specialize(half >= vec).split(i, io, ii, vec, TailStrategy::ShiftInwards).reorder(ii, j, io).vectorize(ii).unroll(j);
    s.reorder(j, i).unroll(j);
  });
}

}  // namespace npukit::schedules::cpu
