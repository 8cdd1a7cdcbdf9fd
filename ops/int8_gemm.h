// INT8 GEMM as pure Halide algorithms (docs/ops/int8_gemm.md): the exact int32
// accumulation over packed weights, and the epilogues that turn it into float or
// requantized int8 outputs.
#pragma once

#include "Halide.h"
#include "ops/round_even.h"

namespace npukit::ops {

struct Int8GemmAcc {
  Halide::Var n{"n"}, m{"m"}, j{"j"}, c{"c"}, nb{"nb"}, kv{"kv"};
  bool pairwise = false;
  // (kk, kg): k = 4·kg + kk over k_pad, in whole groups; pairwise: (kx, kg), k = 4·kg + 2·j + kx
  Halide::RDom k;
  // pairwise only: (k, m) a + 128 widened to int16, so that a step's row is one broadcast;
  // (j, c, nb, m) dot's sum over pair j of each group, for channel 16·nb + c (the packed
  // layout's coordinates, so that each weight vector is one dense load)
  Halide::Func a_wide{"a_wide"}, pairs{"pairs_u8s8"};
  Halide::Func dot{"dot_u8s8"};      // (n, m): Σ_k (a + 128) · w, the form vpdpbusd computes
  Halide::Func acc{"acc"};           // (n, m): Σ_k (a − zp) · w, exact in int32
  Halide::Func a, w_packed;          // the inputs as given, for schedules that stage them (GPU)
};

// `a(k, m)`: int8 activations, readable for k in [0, k_pad); `w_packed(kk, lane, kg, nb)`:
// int8 weights as layouts::PackedInt8Weights stores them; `w_sums(n)`: Σ_k w[n][k].
// The u8 sum wraps modulo 2^32 and so does the correction: the result is exact whenever
// the true sum fits in int32, which the op's K limit guarantees.
// `pairwise`: for CPUs without a 4-byte dot product, the sum runs over pairs of k (one
// int16 × int16 → int32 pmaddwd lane each, exact) and the two pairs of a group are added
// once at the end, not horizontally on every step.
Int8GemmAcc define_int8_gemm_acc(Halide::Func a, Halide::Func w_packed, Halide::Func w_sums,
                                 Halide::Expr k_pad, Halide::Expr a_zero_point, bool pairwise = false);

// gemmlowp's SaturatingRoundingDoublingHighMul and RoundingDivideByPOT on int32 Exprs.
Halide::Expr saturating_rounding_doubling_high_mul(Halide::Expr a, Halide::Expr b);
Halide::Expr rounding_divide_by_pot(Halide::Expr x, Halide::Expr exponent);

// int8 from int32 `acc` with a per-channel (multiplier, shift), as TFLite's
// MultiplyByQuantizedMultiplier then + zero point, saturated.
Halide::Expr requantize_fixed_point(Halide::Expr acc, Halide::Expr multiplier, Halide::Expr shift,
                                    Halide::Expr out_zero_point);

// int8 from int32 `acc` as ONNX QLinearMatMul: nearbyint((float)acc · m) + zero point,
// saturated, all in fp32; `rounding`: the form of nearbyint (ops/round_even.h, same result).
Halide::Expr requantize_float(Halide::Expr acc, Halide::Expr m, Halide::Expr out_zero_point, Rounding rounding);

}  // namespace npukit::ops

// ---- Section NPUKIT_ALGORITHM_int8_gemm: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_int8_gemm

namespace npukit::ops {

using namespace Halide;

Int8GemmAcc define_int8_gemm_acc(Func a, Func w_packed, Func w_sums, Expr k_pad, Expr a_zero_point, bool pairwise) {
  Int8GemmAcc g;
  g.a = a;
  g.w_packed = w_packed;
  g.pairwise = pairwise;
  Var n = g.n, m = g.m, j = g.j, c = g.c, nb = g.nb, kv = g.kv;
  // k in whole groups of 4: no remainder loop exists for LLVM to auto-vectorize with
  // instructions outside the kernel's tier (it did: VEX vpdpwssd on ymm).
  g.k = RDom(0, pairwise ? 2 : 4, 0, k_pad / 4, "k");
  Expr k = pairwise ? g.k.x + 2 * j + 4 * g.k.y : g.k.x + 4 * g.k.y;
  // a + 128 as u8 is a with its sign bit flipped. vpdpbusd multiplies u8 by s8 only, so
  // the signed activations are shifted and the shift comes back out through Σ_k w.
  auto a_u8 = [&](const Expr& at) { return reinterpret<uint8_t>(a(at, m)) ^ cast<uint8_t>(128); };
  if (pairwise) {
    g.a_wide(kv, m) = cast<int16_t>(a_u8(kv));
    g.pairs(j, c, nb, m) = 0;
    g.pairs(j, c, nb, m) += cast<int32_t>(g.a_wide(k, m)) * cast<int32_t>(w_packed(2 * j + g.k.x, c, g.k.y, nb));
    g.dot(n, m) = g.pairs(0, n % 16, n / 16, m) + g.pairs(1, n % 16, n / 16, m);
  } else {
    g.dot(n, m) = 0;
    g.dot(n, m) += cast<int32_t>(a_u8(k)) * cast<int32_t>(w_packed(k % 4, n % 16, k / 4, n / 16));
  }
  g.acc(n, m) = g.dot(n, m) - (128 + a_zero_point) * w_sums(n);
  return g;
}

Expr saturating_rounding_doubling_high_mul(Expr a, Expr b) {
  Expr ab = cast<int64_t>(a) * cast<int64_t>(b);
  Expr nudge = select(ab >= 0, Expr(int64_t(1) << 30), Expr(int64_t(1) - (int64_t(1) << 30)));
  // C's division truncates toward zero; Halide's rounds toward −inf: correct for it.
  Expr num = ab + nudge;
  Expr q = num / Expr(int64_t(1) << 31);
  Expr truncated = select(num < 0 && q * Expr(int64_t(1) << 31) != num, q + 1, q);
  Expr overflow = a == b && a == Int(32).min();
  return select(overflow, Int(32).max(), cast<int32_t>(truncated));
}

Expr rounding_divide_by_pot(Expr x, Expr exponent) {
  // In int64: 1 << 31 would overflow int32, and Halide treats signed overflow as undefined.
  Expr mask = cast<int32_t>((cast<int64_t>(1) << cast<int64_t>(exponent)) - 1);
  Expr remainder = x & mask;
  Expr threshold = (mask >> 1) + select(x < 0, 1, 0);
  return (x >> exponent) + select(remainder > threshold, 1, 0);
}

Expr requantize_fixed_point(Expr acc, Expr multiplier, Expr shift, Expr out_zero_point) {
  Expr left = max(shift, 0), right = max(-shift, 0);
  // acc · 2^left, saturated to int32 (C would overflow; the contract saturates).
  Expr shifted = cast<int32_t>(clamp(cast<int64_t>(acc) << cast<int64_t>(left), cast<int64_t>(Int(32).min()),
                                     cast<int64_t>(Int(32).max())));
  Expr x = rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right);
  return cast<int8_t>(clamp(cast<int64_t>(x) + out_zero_point, -128, 127));
}

Expr requantize_float(Expr acc, Expr m, Expr out_zero_point, Rounding rounding) {
  // strict_float: the contract is fp32 round-to-nearest-even, not whatever fast-math fuses.
  Expr v = strict_float(cast<float>(acc) * m);
  Expr r = strict_float(round_half_even(v, rounding));
  Expr q = strict_float(clamp(r + cast<float>(out_zero_point), -128.0f, 127.0f));
  return cast<int8_t>(q);
}

}  // namespace npukit::ops

// INT8 GEMM Generators: the exact int32 accumulation over packed weights (one schedule
// for decode, one for prefill), and the epilogues that scale or requantize it.
#include <stdexcept>

#include "Halide.h"
#include "layouts/vnni_int8.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/int8_gemm_amx.h"
#include "ops/prefetch.h"
#include "schedules/cpu/int8_gemm.h"
#include "schedules/cpu/int8_gemm_amx.h"
#include "schedules/gpu/int8_gemm.h"

namespace npukit {
namespace {

using schedules::cpu::GemmShape;

class Int8GemmAccGenerator : public Halide::Generator<Int8GemmAccGenerator> {
 public:
  GeneratorParam<GemmShape> shape{"shape", GemmShape::decode,
                                  {{"decode", GemmShape::decode}, {"prefill", GemmShape::prefill}}};
  // The avx512_amx tier (cmake/NpukitKernels.cmake sets it): AMX tile matmuls. Its Halide
  // target is the avx512_vnni tier's (Halide 14 has no AMX feature of its own).
  GeneratorParam<bool> amx{"amx", false};
  // With amx: the kernel for a_zero_point = 0 (it does not read it: the runtime calls it
  // only then), N a multiple of 32 (constrained) and M of at least 16, storing each tile
  // straight into acc where the general AMX kernel stores it to a buffer and subtracts the
  // zero point's share.
  GeneratorParam<bool> direct{"direct", false};
  Input<Halide::Buffer<int8_t, 2>> a{"a"};                // (k_pad, M); GPU: (K, M)
  Input<Halide::Buffer<int8_t, 4>> w_packed{"w_packed"};  // (4, 16, k_pad/4, n_pad/16)
  Input<Halide::Buffer<int32_t, 1>> w_sums{"w_sums"};     // (n_pad)
  Input<int32_t> a_zero_point{"a_zero_point"};
  // The threads of the Halide pool the call runs on (runtime/halide_threads.h): the AMX tier
  // prefetches the weights of the task this thread takes next; the other kernels ignore it.
  Input<int32_t> threads{"threads"};
  Output<Halide::Buffer<int32_t, 2>> acc{"acc"};          // (N, M)

  void generate() {
    ops::set_mins_to_zero(a, w_packed);
    w_packed.dim(0).set_extent(4);
    w_packed.dim(1).set_extent(16).set_stride(4);
    const Halide::Target target = get_target();
    // The GPU schedules stage whole tiles and K chunks, boxes that reach past the buffers'
    // edges (rows past M, groups past k_pad): read through boundary conditions there.
    const bool gpu = target.has_gpu_feature();
    if (direct && !amx) throw std::invalid_argument("npukit_int8_gemm_acc: direct=true needs amx=true");
    if (amx) {
      if (gpu || !target.has_feature(Halide::Target::AVX512_SapphireRapids)) {
        throw std::invalid_argument("npukit_int8_gemm_acc: amx=true needs a CPU target with avx512_sapphirerapids, not " +
                                    target.to_string());
      }
      // A K group of 16 channels is one 64-byte row of an AMX B tile: saying so makes the B
      // rows of consecutive K steps a constant distance apart, which ops::AmxFuseK needs.
      w_packed.dim(2).set_stride(64);
      // Whole 64-byte K steps only (the packing's kKAlign): a call with another k_pad fails
      // Halide's constraint check instead of reading past a's rows.
      constexpr int kStep = layouts::PackedInt8Weights::kKAlign;
      a.dim(0).set_extent(a.dim(0).extent() / kStep * kStep);
      // ops::AmxPrefetchNext's prefetches: one line per call, into L2.
      ops::add_prefetch_bitcode(*get_externs_map(), target, ops::PrefetchLevel::l2);
      amx_acc = ops::define_int8_gemm_acc_amx(a, w_packed, w_sums, a.dim(0).extent(), a_zero_point, direct);
      acc = amx_acc.acc;
      ops::set_mins_to_zero(acc);
      if (direct) {
        using schedules::cpu::kAmxTaskChannels;
        acc.dim(0).set_extent(acc.dim(0).extent() / kAmxTaskChannels * kAmxTaskChannels);
      }
      return;  // scheduled in schedule(), which may add the lowering pass
    }
    Halide::Func a_in = a, w_in = w_packed;
    // The CPU kernels read `a` padded to k_pad by the caller. The GPU kernels take it as the
    // caller holds it (a framework's device tensor, which npukit cannot pad without a copy):
    // k_pad comes from the weights, and `a` reads as zeros past K (the weights' padding is
    // zero, so those products vanish) and past M.
    Halide::Expr k_pad = a.dim(0).extent();
    if (gpu) {
      a_in = Halide::BoundaryConditions::constant_exterior(a, Halide::cast<int8_t>(0));
      w_in = Halide::BoundaryConditions::repeat_edge(w_packed);
      k_pad = w_packed.dim(2).extent() * 4;
    }
    const bool pairwise = !gpu && schedules::cpu::sums_in_pairs(shape, target);
    ops::Int8GemmAcc g = ops::define_int8_gemm_acc(a_in, w_in, w_sums, k_pad, a_zero_point, pairwise);
    acc = g.acc;
    ops::set_mins_to_zero(acc);
    if (gpu) {
      schedules::gpu::schedule_int8_gemm_acc(g, shape, target);
    } else {
      if (schedules::cpu::prefetches_weights(shape)) {
        ops::add_prefetch_bitcode(*get_externs_map(), target, ops::PrefetchLevel::l2);
      }
      schedules::cpu::schedule_int8_gemm_acc(g, shape, target, Halide::ImageParam(w_packed));
    }
  }

  void schedule() {
    if (amx) schedules::cpu::schedule_int8_gemm_acc_amx(amx_acc, get_pipeline(), w_packed.name(), threads, direct);
    ops::add_prefetch_line_steps(get_pipeline());
  }

 private:
  ops::Int8GemmAccAmx amx_acc;
};

enum class Epilogue { scale, fixed_point, float_round };

// y(n, m) from acc(n, m): `scale` gives floats, acc · (row_scale[m] · chan_scale[n]) + bias[n]
// (row_scale: the per-row activation scales, ones when the op has a single a_scale);
// `fixed_point` and `float_round` give int8 under the two requantization modes.
class Int8EpilogueGenerator : public Halide::Generator<Int8EpilogueGenerator> {
 public:
  GeneratorParam<Epilogue> mode{"mode", Epilogue::scale,
                                {{"scale", Epilogue::scale}, {"fixed_point", Epilogue::fixed_point}, {"float", Epilogue::float_round}}};
  Input<Halide::Buffer<int32_t, 2>> acc{"acc"};
  Input<Halide::Buffer<float, 1>> chan_scale{"chan_scale"};   // scale: a_scale·w_scale; float: the fp32 m
  Input<Halide::Buffer<float, 1>> row_scale{"row_scale"};     // scale only: [M]
  Input<Halide::Buffer<float, 1>> bias{"bias"};
  Input<Halide::Buffer<int32_t, 1>> multiplier{"multiplier"};
  Input<Halide::Buffer<int32_t, 1>> shift{"shift"};
  Input<int32_t> out_zero_point{"out_zero_point"};
  Output<Halide::Buffer<void, 2>> y{"y"};

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    Var n("n"), m("m");
    Func out("epilogue");
    if (mode == Epilogue::scale) {
      Expr v = cast<float>(acc(n, m)) * (row_scale(m) * chan_scale(n)) + bias(n);
      out(n, m) = ops::narrow_from_f32(v, y.type(), get_target());
    } else if (mode == Epilogue::fixed_point) {
      out(n, m) = ops::requantize_fixed_point(acc(n, m), multiplier(n), shift(n), out_zero_point);
    } else {
      out(n, m) = ops::requantize_float(acc(n, m), chan_scale(n), out_zero_point, ops::rounding_for(get_target()));
    }
    y = out;
    if (get_target().has_gpu_feature()) {
      schedules::gpu::schedule_int8_epilogue(out, get_target());
      return;
    }
    const int vec = get_target().natural_vector_size<float>();
    out.specialize(acc.dim(0).extent() >= vec).vectorize(n, vec, TailStrategy::ShiftInwards);
    out.parallel(m);
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::Int8GemmAccGenerator, npukit_int8_gemm_acc)
HALIDE_REGISTER_GENERATOR(npukit::Int8EpilogueGenerator, npukit_int8_epilogue)

#endif  // NPUKIT_ALGORITHM_int8_gemm
