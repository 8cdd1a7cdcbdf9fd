#include "ops/float_convert.h"

#include "f16c_convert_bitcode.h"
#include "f16c_convert_x16_ymm_bitcode.h"
#include "f16c_convert_x16_zmm_bitcode.h"
#include "ops/linked_bitcode.h"
#include "ops/round_even.h"

namespace npukit::ops {

using namespace Halide;

bool has_native_f16(const Target& t) {
  // With a GPU feature the conversions run inside device kernels, where the x86 bitcode
  // cannot go; the device converts natively (PTX cvt) and the select keeps NaN a NaN.
  if (t.has_gpu_feature()) return false;
  return t.arch == Target::X86 && t.bits == 64 && (t.has_feature(Target::F16C) || t.has_feature(Target::AVX2));
}

void add_f16c_bitcode(GeneratorContext::ExternsMap& generator_externs, const Target& t) {
  if (!has_native_f16(t)) return;
  link_bitcode(generator_externs, t, "npukit.f16c_convert.v1", npukit_f16c_convert_bitcode,
               npukit_f16c_convert_bitcode_len);
  // 16 lanes in one zmm where the tier has AVX-512: the avx512 attention kernel's inner
  // loops widened every 16 fp16 values with two conversions and an insert.
  if (t.has_feature(Target::AVX512_Skylake)) {
    link_bitcode(generator_externs, t, "npukit.f16c_convert_x16.zmm.v1", npukit_f16c_convert_x16_zmm_bitcode,
                 npukit_f16c_convert_x16_zmm_bitcode_len);
  } else {
    link_bitcode(generator_externs, t, "npukit.f16c_convert_x16.ymm.v1", npukit_f16c_convert_x16_ymm_bitcode,
                 npukit_f16c_convert_x16_ymm_bitcode_len);
  }
}

namespace {

Expr u32(uint32_t v) { return Internal::make_const(UInt(32), v); }

// fp16 bits → fp32, exact for every value (NaN payloads kept).
Expr fp16_bits_to_f32(Expr bits) {
  Expr u = cast<uint32_t>(bits);
  Expr sign = (u & u32(0x8000)) << 16;
  Expr exp = (u >> 10) & u32(0x1f), man = u & u32(0x3ff);
  Expr normal = ((exp + u32(112)) << 23) | (man << 13);
  Expr special = u32(0x7f800000) | (man << 13);
  // A subnormal is man·2^-24: exact in fp32, so the scaling by a power of two is too.
  Expr subnormal = reinterpret<uint32_t>(cast<float>(man) * 0x1p-24f);
  return reinterpret<float>(sign | select(exp == u32(0), subnormal, exp == u32(31), special, normal));
}

// fp32 → fp16 bits, round to nearest even; overflow to ±Inf; every NaN to 0x7e00 (as the
// CPU path does).
Expr f32_to_fp16_bits(Expr v) {
  Expr x = reinterpret<uint32_t>(v);
  Expr sign = (x >> 16) & u32(0x8000);
  Expr a = x & u32(0x7fffffff);
  Expr h = (a >> 13) - u32(112 << 10);  // rebias the exponent; only used for normal results
  Expr rem = a & u32(0x1fff);
  // A carry out of the mantissa bumps the exponent, up to 0x7c00 (Inf): still correct.
  Expr normal = h + select(rem > u32(0x1000) || (rem == u32(0x1000) && (h & u32(1)) == u32(1)), u32(1), u32(0));
  // Below 2^-14 the result is round(|v|·2^24) units of 2^-24 (1024 is the smallest normal's
  // bits), ties to even; the scaling is exact.
  Expr subnormal = cast<uint32_t>(strict_float(round_half_even(reinterpret<float>(a) * 0x1p24f)));
  Expr mag = select(a < u32(0x38800000), subnormal, a < u32(0x47800000), normal, u32(0x7c00));
  return cast<uint16_t>(select(a > u32(0x7f800000), u32(0x7e00), sign | mag));
}

}  // namespace

Expr widen_to_f32(Expr v, const Target& t) {
  if (v.type().element_of() == UInt(16)) return fp16_bits_to_f32(v);
  if (v.type().bits() != 16) return cast<float>(v);
  const int lanes = v.type().lanes();
  Expr bits = reinterpret(UInt(16, lanes), v);
  if (has_native_f16(t)) {
    return Internal::Call::make(Float(32, lanes), "npukit_f16bits_to_f32", {bits}, Internal::Call::PureExtern);
  }
  Expr is_nan16 = (bits & 0x7fff) > 0x7c00;
  return select(is_nan16, reinterpret<float>(cast<uint32_t>(0x7fc00000)), cast<float>(v));
}

Expr narrow_from_f32(Expr v, Type type, const Target& t) {
  if (type.element_of() == UInt(16)) return f32_to_fp16_bits(v);
  if (type.bits() != 16) return cast(type, v);
  const int lanes = v.type().lanes();
  if (has_native_f16(t)) {
    return reinterpret(type, Internal::Call::make(UInt(16, lanes), "npukit_f32_to_f16bits", {v},
                                                  Internal::Call::PureExtern));
  }
  // Test the fp32 bits, not v != v: fast-math may assume no NaNs and fold that away.
  Expr is_nan32 = (reinterpret<uint32_t>(v) & 0x7fffffff) > 0x7f800000;
  return select(is_nan32, reinterpret(type, cast<uint16_t>(0x7e00)), cast(type, v));
}

}  // namespace npukit::ops
