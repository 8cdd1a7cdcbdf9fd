; Fused multiply-add for Halide 14 on x86 (see ops/fma.h): a·b + c rounded once. Halide 14
; has no fma operation and never contracts a strictly-float multiply and add, so an exact
; remainder a − b·q (what correctly rounded quotients are built from) needs this. A
; vectorized PureExtern call NAME is emitted as NAMEx<lanes> where the module defines it;
; wider vectors are split into these. llvm.fma is exact on every target (a library call
; where the CPU lacks FMA), so the bitcode is only linked where it is one instruction.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

declare float @llvm.fma.f32(float, float, float)
declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
declare <8 x float> @llvm.fma.v8f32(<8 x float>, <8 x float>, <8 x float>)
declare <16 x float> @llvm.fma.v16f32(<16 x float>, <16 x float>, <16 x float>)

define weak_odr float @npukit_fma_f32(float %a, float %b, float %c) #0 {
  %r = call float @llvm.fma.f32(float %a, float %b, float %c)
  ret float %r
}
define weak_odr <4 x float> @npukit_fma_f32x4(<4 x float> %a, <4 x float> %b, <4 x float> %c) #0 {
  %r = call <4 x float> @llvm.fma.v4f32(<4 x float> %a, <4 x float> %b, <4 x float> %c)
  ret <4 x float> %r
}
define weak_odr <8 x float> @npukit_fma_f32x8(<8 x float> %a, <8 x float> %b, <8 x float> %c) #0 {
  %r = call <8 x float> @llvm.fma.v8f32(<8 x float> %a, <8 x float> %b, <8 x float> %c)
  ret <8 x float> %r
}
define weak_odr <16 x float> @npukit_fma_f32x16(<16 x float> %a, <16 x float> %b, <16 x float> %c) #0 {
  %r = call <16 x float> @llvm.fma.v16f32(<16 x float> %a, <16 x float> %b, <16 x float> %c)
  ret <16 x float> %r
}
attributes #0 = { alwaysinline nounwind readnone }
