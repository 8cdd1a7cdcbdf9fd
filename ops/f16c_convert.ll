; Native fp16 <-> fp32 conversion for Halide 14 on x86 (see ops/float_convert.h).
; Halide 14 never emits LLVM `half` on x86 and converts in software; a vectorized
; PureExtern call NAME is emitted as a call to NAMEx<lanes> when the module defines it,
; and ExternalCode bitcode is linked before code generation. These definitions are
; inlined. The conversions are inline asm, not fpext/fptrunc: LLVM's instcombine folds
; fptrunc(fpext(a) + fpext(b)) into an fadd on half and fcmp(fpext(a), 0.0) into an fcmp
; on half, which x86 without AVX512-FP16 then computes lane by lane in scalar code
; (add_rms_norm's fp16 residual sum and silu_mul's fp16 sign test ran 2-5x slower than
; fp32 for it). An asm block is opaque to those folds. vcvtps2ph's immediate 0 is round
; to nearest even, fptrunc's rounding. 16 lanes are in a module of their own per register
; width (f16c_convert_x16_ymm.ll, f16c_convert_x16_zmm.ll). weak_odr, not linkonce_odr: the
; linker must keep them although nothing references them yet.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

; 4 lanes travel as the low half of 8: LLVM drops an asm operand of type <4 x i16>.
define weak_odr <4 x float> @npukit_f16bits_to_f32x4(<4 x i16> %x) #0 {
  %w = shufflevector <4 x i16> %x, <4 x i16> undef, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 undef, i32 undef, i32 undef, i32 undef>
  %f = call <4 x float> asm "vcvtph2ps $1, $0", "=x,x"(<8 x i16> %w) #1
  ret <4 x float> %f
}
define weak_odr <4 x i16> @npukit_f32_to_f16bitsx4(<4 x float> %x) #0 {
  %w = call <8 x i16> asm "vcvtps2ph $$0, $1, $0", "=x,x"(<4 x float> %x) #1
  %b = shufflevector <8 x i16> %w, <8 x i16> undef, <4 x i32> <i32 0, i32 1, i32 2, i32 3>
  ret <4 x i16> %b
}
define weak_odr <8 x float> @npukit_f16bits_to_f32x8(<8 x i16> %x) #0 {
  %f = call <8 x float> asm "vcvtph2ps $1, $0", "=x,x"(<8 x i16> %x) #1
  ret <8 x float> %f
}
define weak_odr <8 x i16> @npukit_f32_to_f16bitsx8(<8 x float> %x) #0 {
  %b = call <8 x i16> asm "vcvtps2ph $$0, $1, $0", "=x,x"(<8 x float> %x) #1
  ret <8 x i16> %b
}
define weak_odr float @npukit_f16bits_to_f32(i16 %x) #0 {
  %v = insertelement <4 x i16> undef, i16 %x, i32 0
  %f = call <4 x float> @npukit_f16bits_to_f32x4(<4 x i16> %v)
  %s = extractelement <4 x float> %f, i32 0
  ret float %s
}
define weak_odr i16 @npukit_f32_to_f16bits(float %x) #0 {
  %v = insertelement <4 x float> undef, float %x, i32 0
  %b = call <4 x i16> @npukit_f32_to_f16bitsx4(<4 x float> %v)
  %s = extractelement <4 x i16> %b, i32 0
  ret i16 %s
}
attributes #0 = { alwaysinline nounwind readnone }
attributes #1 = { nounwind readnone }
