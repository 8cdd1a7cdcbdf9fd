// Conversions between storage types and fp32 arithmetic that keep IEEE semantics and run
// at memory speed. Halide 14 converts float16 in software on x86 (no F16C instructions,
// about 3x slower than DRAM for a fused kernel) and turns a NaN into an infinity on the
// way to float16. Where the target has F16C, these use vcvtph2ps / vcvtps2ph through a
// little linked bitcode (ops/f16c_convert.ll, 16 lanes in one zmm on the AVX-512 tiers:
// ops/f16c_convert_x16_zmm.ll); elsewhere Halide's software conversion,
// with NaN kept a NaN both ways. Storage type uint16 means fp16 held as its bits: the
// OpenCL kernels take fp16 tensors that way, because an OpenCL device without cl_khr_fp16
// (PoCL on a CPU) cannot declare a `half` value; the conversion is then integer arithmetic.
#pragma once

#include "Halide.h"

namespace npukit::ops {

// Whether `t` gets the native conversions (x86-64 with F16C; Halide sets mcpu=haswell
// for AVX2, which has it).
bool has_native_f16(const Halide::Target& t);

// Links the conversion bitcode into what `generator_externs` compiles, for targets that
// use it. Call from every Generator that uses widen_to_f32 / narrow_from_f32.
void add_f16c_bitcode(Halide::GeneratorContext::ExternsMap& generator_externs, const Halide::Target& t);

// `v` (any float type, or uint16 fp16 bits) as fp32.
Halide::Expr widen_to_f32(Halide::Expr v, const Halide::Target& t);

// fp32 `v` stored as `type` (float32, float16 or uint16 fp16 bits; round to nearest even),
// NaN preserved.
Halide::Expr narrow_from_f32(Halide::Expr v, Halide::Type type, const Halide::Target& t);

}  // namespace npukit::ops
