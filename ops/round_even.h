// Round half to even for fp32, the same on every backend. Halide 14 documents `round` as
// ties-to-even, and it is on the CPU, but its OpenCL C backend prints it as OpenCL's
// `round`, which rounds halves away from zero (seen on PoCL: 0.5 → 1). This one is exact
// integer-and-compare arithmetic, which no fast-math flag can reassociate.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// nearbyint(v) under round-to-nearest-even for fp32 `v`; |v| ≥ 2^23 (already an integer),
// ±Inf and NaN come back unchanged. The sign of a zero result is not kept.
inline Halide::Expr round_half_even(Halide::Expr v) {
  using namespace Halide;
  Expr small = abs(v) < 0x1p23f;
  Expr i = cast<int32_t>(select(small, v, 0.0f));  // toward zero; only used when small
  Expr t = cast<float>(i);
  Expr f = abs(v - t);  // exact: the fraction dropped, in [0, 1)
  Expr away = f > 0.5f || (f == 0.5f && (i & 1) != 0);
  Expr r = t + select(away, select(v < 0.0f, -1.0f, 1.0f), 0.0f);
  return select(small, r, v);
}

// Which form of the same rounding a kernel uses. On an x86 CPU, Halide's round() lowers to
// SSE4.1/AVX `roundps` in its round-to-nearest-even mode: one instruction per vector where
// the portable form above takes about 30 (its boolean selects are packed to bytes and
// back; per_token_quant ran at 0.2-0.3 of the copy of its bytes on Zen 3). The portable
// form stays for GPUs (OpenCL C prints round() as round-half-away) and for the NPU
// simulator, which costs it.
enum class Rounding { portable, x86_roundps };

inline Rounding rounding_for(const Halide::Target& target) {
  const bool x86_cpu = target.arch == Halide::Target::X86 && !target.has_gpu_feature();
  return x86_cpu ? Rounding::x86_roundps : Rounding::portable;
}

inline Halide::Expr round_half_even(Halide::Expr v, Rounding form) {
  return form == Rounding::x86_roundps ? Halide::round(v) : round_half_even(v);
}

// Rounding by the FPU's own mode (nearest even) in one add: for |v| < 2^22, v + 1.5·2^23
// lies in [2^23, 2^24), where fp32's spacing is 1, so the sum is v rounded to an integer n,
// and its encoding is kRoundingBiasBits + n (two's complement in the low bits). Under
// strict_float, so that nothing folds the add away.
inline constexpr float kRoundingBias = 0x1.8p23f;
inline constexpr int32_t kRoundingBiasBits = 0x4b400000;

// nearbyint(v) as int8 for finite fp32 `v` known to lie in [-127.5, 127.5): on x86 by
// kRoundingBias: the biased encoding's low byte is the int8.
inline Halide::Expr round_to_int8(Halide::Expr v, Rounding form) {
  using namespace Halide;
  if (form == Rounding::x86_roundps) {
    Expr biased = strict_float(v + kRoundingBias);
    return cast<int8_t>(reinterpret<int32_t>(biased) - kRoundingBiasBits);
  }
  return cast<int8_t>(strict_float(round_half_even(v)));
}

// clamp(nearbyint(v), lo, hi) as int8 for finite fp32 `v`, integral lo ≤ hi in [-128, 127].
// On x86 round_to_int8 of the clamped value: two instructions where roundps on 16 lanes
// took four (Halide 14 splits it into two 8-lane halves) and the conversion a fifth.
inline Halide::Expr round_clamp_to_int8(Halide::Expr v, float lo, float hi, Rounding form) {
  using namespace Halide;
  if (form == Rounding::x86_roundps) return round_to_int8(clamp(v, lo, hi), form);
  return cast<int8_t>(strict_float(clamp(round_half_even(v), lo, hi)));
}

}  // namespace npukit::ops
