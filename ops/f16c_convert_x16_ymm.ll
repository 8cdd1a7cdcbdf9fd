; 16 lanes of the fp16 conversions (ops/f16c_convert.ll) where there is no zmm (the avx2
; tier): two halves of 8.
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
target triple = "x86_64-unknown-linux-gnu"

declare <8 x float> @npukit_f16bits_to_f32x8(<8 x i16>)
declare <8 x i16> @npukit_f32_to_f16bitsx8(<8 x float>)

define weak_odr <16 x float> @npukit_f16bits_to_f32x16(<16 x i16> %x) #0 {
  %lo = shufflevector <16 x i16> %x, <16 x i16> undef, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  %hi = shufflevector <16 x i16> %x, <16 x i16> undef, <8 x i32> <i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %a = call <8 x float> @npukit_f16bits_to_f32x8(<8 x i16> %lo)
  %b = call <8 x float> @npukit_f16bits_to_f32x8(<8 x i16> %hi)
  %f = shufflevector <8 x float> %a, <8 x float> %b, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  ret <16 x float> %f
}
define weak_odr <16 x i16> @npukit_f32_to_f16bitsx16(<16 x float> %x) #0 {
  %lo = shufflevector <16 x float> %x, <16 x float> undef, <8 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7>
  %hi = shufflevector <16 x float> %x, <16 x float> undef, <8 x i32> <i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  %a = call <8 x i16> @npukit_f32_to_f16bitsx8(<8 x float> %lo)
  %b = call <8 x i16> @npukit_f32_to_f16bitsx8(<8 x float> %hi)
  %f = shufflevector <8 x i16> %a, <8 x i16> %b, <16 x i32> <i32 0, i32 1, i32 2, i32 3, i32 4, i32 5, i32 6, i32 7, i32 8, i32 9, i32 10, i32 11, i32 12, i32 13, i32 14, i32 15>
  ret <16 x i16> %f
}
attributes #0 = { alwaysinline nounwind readnone }
