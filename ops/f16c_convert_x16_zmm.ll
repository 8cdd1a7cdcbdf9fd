; 16 lanes of the fp16 conversions (ops/f16c_convert.ll) in one zmm, for the AVX-512 tiers:
; one instruction where two halves of 8 take three (two conversions and the insert that
; joins them), in the inner loops that widen fp16 caches and weights.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

define weak_odr <16 x float> @npukit_f16bits_to_f32x16(<16 x i16> %x) #0 {
  %f = call <16 x float> asm "vcvtph2ps $1, $0", "=v,v"(<16 x i16> %x) #1
  ret <16 x float> %f
}
define weak_odr <16 x i16> @npukit_f32_to_f16bitsx16(<16 x float> %x) #0 {
  %b = call <16 x i16> asm "vcvtps2ph $$0, $1, $0", "=v,v"(<16 x float> %x) #1
  ret <16 x i16> %b
}
attributes #0 = { alwaysinline nounwind readnone }
attributes #1 = { nounwind readnone }
