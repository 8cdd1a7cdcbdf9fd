// Fused multiply-add in Halide 14 kernels: a·b + c with one rounding, as an exact remainder
// needs (Halide 14 has no fma and, under strict_float, never contracts a multiply and add).
// x86-64 CPU targets with FMA only, through linked bitcode (ops/fma_f32.ll).
#pragma once

#include "Halide.h"

namespace npukit::ops {

// Whether `t` can use fma(): an x86-64 CPU target with the FMA feature.
bool has_native_fma(const Halide::Target& t);

// Links the fma bitcode into what `generator_externs` compiles, where has_native_fma(t).
void add_fma_bitcode(Halide::GeneratorContext::ExternsMap& generator_externs, const Halide::Target& t);

// a·b + c rounded once, fp32 (any lanes). Only for targets where has_native_fma.
Halide::Expr fma(Halide::Expr a, Halide::Expr b, Halide::Expr c);

}  // namespace npukit::ops
