; Native fp16 <-> fp32 conversion for Halide 14 on x86 (see ops/float_convert.h).
; Halide 14 never emits LLVM `half` on x86 and converts in software; a vectorized
; PureExtern call NAME is emitted as a call to NAMEx<lanes> when the module defines it,
; and ExternalCode bitcode is linked before code generation. These definitions are
; inlined, and LLVM selects vcvtph2ps / vcvtps2ph. weak_odr, not linkonce_odr: the
; linker must keep them although nothing references them yet.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

define weak_odr float @npukit_f16bits_to_f32(i16 %x) #0 {
  %h = bitcast i16 %x to half
  %f = fpext half %h to float
  ret float %f
}
define weak_odr i16 @npukit_f32_to_f16bits(float %x) #0 {
  %h = fptrunc float %x to half
  %b = bitcast half %h to i16
  ret i16 %b
}
define weak_odr <4 x float> @npukit_f16bits_to_f32x4(<4 x i16> %x) #0 {
  %h = bitcast <4 x i16> %x to <4 x half>
  %f = fpext <4 x half> %h to <4 x float>
  ret <4 x float> %f
}
define weak_odr <4 x i16> @npukit_f32_to_f16bitsx4(<4 x float> %x) #0 {
  %h = fptrunc <4 x float> %x to <4 x half>
  %b = bitcast <4 x half> %h to <4 x i16>
  ret <4 x i16> %b
}
define weak_odr <8 x float> @npukit_f16bits_to_f32x8(<8 x i16> %x) #0 {
  %h = bitcast <8 x i16> %x to <8 x half>
  %f = fpext <8 x half> %h to <8 x float>
  ret <8 x float> %f
}
define weak_odr <8 x i16> @npukit_f32_to_f16bitsx8(<8 x float> %x) #0 {
  %h = fptrunc <8 x float> %x to <8 x half>
  %b = bitcast <8 x half> %h to <8 x i16>
  ret <8 x i16> %b
}
define weak_odr <16 x float> @npukit_f16bits_to_f32x16(<16 x i16> %x) #0 {
  %h = bitcast <16 x i16> %x to <16 x half>
  %f = fpext <16 x half> %h to <16 x float>
  ret <16 x float> %f
}
define weak_odr <16 x i16> @npukit_f32_to_f16bitsx16(<16 x float> %x) #0 {
  %h = fptrunc <16 x float> %x to <16 x half>
  %b = bitcast <16 x half> %h to <16 x i16>
  ret <16 x i16> %b
}
attributes #0 = { alwaysinline nounwind readnone }
