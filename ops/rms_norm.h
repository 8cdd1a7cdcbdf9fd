// RMSNorm as a pure Halide algorithm: y = x / sqrt(mean(x²) + eps) * weight over the
// innermost dimension. No scheduling here; schedules/<target>/rms_norm.cpp does that.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// How Σx² is accumulated. fp64 holds every fp32 square exactly and the sum of any row;
// it costs the CPU two widenings and two fp64 FMAs per 8 values, which on Zen 3 made an
// fp16 row of 4096 take 1.8 us where fp32 sums take 1.2 (and the copy of its bytes 1.0).
// An fp16 square is exact in fp32 (22 significant bits, at most 65504² = 4.3e9), so for
// fp16 rows fp32 sums of blocks of kSquareSumBlock squares lose only their additions'
// roundings (at most 511 · 2^-24 = 3e-5 relative in any order, 1e-6 with the CPU's 32
// lanes), far under fp16's ULP, and the blocks are summed in fp64 (f32_blocks).
// fp32 rows (f32_blocks_checked) take the same fp32 blocks, whose squares now round (one
// more 2^-24 each) and may overflow (|x| > 1.8e19) or underflow (|x| < 1e-19): a row whose
// blocks' sum is not finite or is under hidden · 2^-100 (where the squares flushed below
// fp32's normals, each under 2^-126, could matter: 2^-26 of the sum at most) is summed again
// in fp64. On Zen 4 the fp64 pass was two thirds of a hot fp32 [1, 4096] call's first
// pass. All-zero rows also take the fp64 pass (0 is under the bound), as NaN rows do.
enum class SquareSum { f64, f32_blocks, f32_blocks_checked };
inline constexpr int kSquareSumBlock = 512;

// The CPU's choice: f32_blocks where the row is fp16 (Float(16), or fp16 bits as UInt(16)),
// f32_blocks_checked otherwise.
SquareSum square_sum_for(Halide::Type x_type);

struct RmsNorm {
  Halide::Var h{"h"}, row{"row"};  // h indexes hidden (innermost), row the outer dimension
  Halide::RDom k;                  // f64: runs over hidden; f32_blocks(_checked): over the whole blocks
  Halide::Func sumsq{"sumsq"};     // per row: Σx² in fp64 (f32_blocks_checked: of the fp32 blocks)
  // f32_blocks(_checked) only (undefined for f64): block(c, row) the fp32 sum of block c's
  // squares over RDom j, tail(row) that of the last hidden % kSquareSumBlock over RDom t;
  // sumsq starts from the tail and adds the blocks.
  Halide::Func block{"sumsq_block"}, tail{"sumsq_tail"};
  Halide::Var c{"c"};
  Halide::RDom j, t;
  // f32_blocks_checked only: Σx² in fp64 over RDom ke (all of hidden), whose predicate
  // leaves it empty unless the row's sumsq is out of range (see SquareSum).
  Halide::Func sumsq_f64{"sumsq_f64"};
  Halide::RDom ke;
  Halide::Func inv_rms{"inv_rms"};  // per row: Tuple(a, b), fp32, a·b = 1 / sqrt(mean(x²) + eps)
  Halide::Func out{"rms_norm"};    // y(h, row) in the output type
};

// `x(h, row)` and `weight(h)` may be of any float type; arithmetic is fp32.
// `target` picks the fp16 conversions (ops/float_convert.h); `sum` the accumulation (f32_blocks
// needs fp16 x).
RmsNorm define_rms_norm(Halide::Func x, Halide::Func weight, Halide::Expr hidden,
                        Halide::Expr eps, Halide::Type out_type, const Halide::Target& target,
                        SquareSum sum = SquareSum::f64);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/rms_norm.cpp, schedules/gpu/rms_norm.cpp);
// the Generator (below) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_rms_norm(ops::RmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
// Σx² of a row computed at `at` (shared with add_rms_norm's schedule).
void schedule_square_sum(ops::RmsNorm& op, Halide::LoopLevel at, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_rms_norm(ops::RmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::gpu

// ---- Section NPUKIT_ALGORITHM_rms_norm: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_rms_norm

#include <limits>

#include "ops/exact_f64.h"
#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

SquareSum square_sum_for(Type x_type) {
  return x_type == Float(16) || x_type == UInt(16) ? SquareSum::f32_blocks : SquareSum::f32_blocks_checked;
}

RmsNorm define_rms_norm(Func x, Func weight, Expr hidden, Expr eps, Type out_type, const Target& target,
                        SquareSum sum) {
  RmsNorm op;
  Var h = op.h, row = op.row;
  // fp32 squares overflow once |x| > 1.8e19 and underflow below 1e-19, while fp64 holds
  // every fp32 square.
  auto square_f64 = [&](Expr i) {
    Expr v = cast<double>(widen_to_f32(x(i, row), target));
    return v * v;
  };
  if (sum == SquareSum::f64) {
    op.k = RDom(0, hidden, "k");
    op.sumsq(row) = cast<double>(0);
    op.sumsq(row) += square_f64(op.k);
  } else {
    const Type xt = x.output_types()[0];
    _halide_user_assert(sum == SquareSum::f32_blocks_checked || xt == Float(16) || xt == UInt(16))
        << "SquareSum::f32_blocks needs fp16 x, not " << xt;
    const int n = kSquareSumBlock;
    Expr whole = hidden / n;
    op.k = RDom(0, whole, "k");
    op.j = RDom(0, n, "j");
    op.t = RDom(0, hidden % n, "t");
    Expr v = widen_to_f32(x(op.c * n + op.j, row), target);
    op.block(op.c, row) = 0.0f;
    op.block(op.c, row) += v * v;
    Expr w = widen_to_f32(x(whole * n + op.t, row), target);
    op.tail(row) = 0.0f;
    op.tail(row) += w * w;
    op.sumsq(row) = cast<double>(op.tail(row));
    op.sumsq(row) += cast<double>(op.block(op.k, row));
  }
  Expr sumsq = op.sumsq(row);
  if (sum == SquareSum::f32_blocks_checked) {
    // strict_float: fast-math may assume finite values and fold the range test away.
    Expr in_range = strict_float(sumsq >= cast<double>(hidden) * exact_f64(0x1p-100) &&
                                 sumsq <= exact_f64(std::numeric_limits<double>::max()));
    op.ke = RDom(0, hidden, "ke");
    op.ke.where(!in_range);
    op.sumsq_f64(row) = cast<double>(0);
    op.sumsq_f64(row) += square_f64(op.ke);
    sumsq = select(in_range, sumsq, op.sumsq_f64(row));
  }

  // 1/rms in fp64, then applied in fp32 as two factors a·b, b a power of two chosen so that
  // a stays a normal fp32 even when rms is beyond fp32's range (|x| near 3.4e38, or tiny
  // values with eps = 0). strict_float keeps IEEE sqrt and division: no reciprocal-sqrt
  // estimates, and NaN/Inf behave as the contract says.
  const auto f64 = exact_f64;
  Expr inv = strict_float(f64(1.0) / sqrt(sumsq / cast<double>(hidden) + cast<double>(eps)));
  Expr small = inv < f64(0x1p-100);
  Expr large = inv > f64(0x1p100);
  Expr up = select(small, f64(0x1p64), large, f64(0x1p-64), f64(1.0));
  Expr down = select(small, 0x1p-64f, large, 0x1p64f, 1.0f);
  op.inv_rms(row) = Tuple(cast<float>(strict_float(inv * up)), down);

  Expr a = op.inv_rms(row)[0], b = op.inv_rms(row)[1];
  op.out(h, row) = narrow_from_f32(strict_float(((widen_to_f32(x(h, row), target) * a) * b) * widen_to_f32(weight(h), target)), out_type, target);
  return op;
}

}  // namespace npukit::ops

// The RMSNorm Generator: one source for the ahead-of-time kernels and for JIT users.
// Storage types come from the `x.type`, `weight.type` and `y.type` generator params.
#include "Halide.h"
#include "ops/float_convert.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class RmsNormGenerator : public Halide::Generator<RmsNormGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};  // (hidden, rows): hidden is innermost
  Input<Halide::Buffer<void, 1>> weight{"weight"};
  Input<float> eps{"eps"};
  Output<Halide::Buffer<void, 2>> y{"y"};

  void generate() {
    Halide::Expr hidden = x.dim(0).extent();
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    const bool gpu = schedules::gpu::is_gpu(get_target());
    const ops::SquareSum sum = gpu ? ops::SquareSum::f64 : ops::square_sum_for(x.type());
    ops::RmsNorm op = ops::define_rms_norm(x, weight, hidden, eps, y.type(), get_target(), sum);
    y = op.out;
    if (gpu) {
      schedules::gpu::schedule_rms_norm(op, hidden, get_target());
    } else {
      schedules::cpu::schedule_rms_norm(op, hidden, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::RmsNormGenerator, npukit_rms_norm)

#endif  // NPUKIT_ALGORITHM_rms_norm
