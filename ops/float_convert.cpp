#include "ops/float_convert.h"

#include "f16c_convert_bitcode.h"

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
  const char* name = "npukit.f16c_convert.v1";
  std::vector<uint8_t> bitcode(npukit_f16c_bitcode, npukit_f16c_bitcode + npukit_f16c_bitcode_len);
  generator_externs.insert({name, ExternalCode::bitcode_wrapper(t, bitcode, name)});
}

Expr widen_to_f32(Expr v, const Target& t) {
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
