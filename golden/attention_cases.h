// Input classes for the `attention` op (causal GQA over a KV cache) and the fused
// `qkv_attention` op: the cases the gate runs a kernel on and checks against
// golden::attention_core and golden::qkv_attention.
#pragma once

#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Common to both generators. The cases of one input class for the float tensors in
// `dtype` (float32, float16 or float64: the same cases, values rounded to dtype); integer
// dtypes have none: empty. The same (class, dtype) always gives the same
// bits. Tensor t of case i (its position in the returned vector) is drawn from
// case_seed("attention/<class>/<t>", i, chunk), or "qkv_attention/<class>/<t>" for the fused
// op. The optional "mask" is float32 [T, S_max] of 0 and −Inf. Unless a case says otherwise
// the data are N(0, 1)-like (unit-variance q, k, v), and the cache rows that the case must
// not read (positions beyond every query, "not yet written") hold garbage ±U[1e3, 3e4]:
// large enough that a kernel which reads them is visibly wrong, finite in fp16.
// Each class costs at most ~2e8 golden multiply-adds in all.
//
// The `attention` op: dims "T", "Hq", "Hkv", "Dh", "S_max"; inputs "q" [T, Hq, Dh],
// "k_cache", "v_cache" [Hkv, S_max, Dh] of dtype, "positions" int32 [T] (integers held as
// doubles, in [0, S_max)), "mask" where a case has one; no params.
//   normal:   decode (T = 1, position 1500 of 2048), a batch of 4 at random positions, a
//             chunk of 16 at 300..315, prefill of 64 from 0, 8 at the end of a 2048 cache,
//             a left-padding mask; GQA 4:1, MQA, MHA; Dh 64 and 128.
//   boundary: cache length 1 (S_max = 1, and position 0 of 64) and S_max (last position of
//             2048, and {2047, 0} together); head_dim 64 and 128; MHA Hq = Hkv, GQA
//             Hq = 8·Hkv, MQA Hkv = 1.
//   overflow: logits far beyond the fp16 exp range (|q·k|/√Dh > 11.09: q, k scaled ×4, and
//             ±U[100, 250] giving logits beyond even double's exp range), cache values
//             |v| in [6e4, 65504], v = 65504 in every live row, and |k| in [6e4, 65504] — all correct
//             only thanks to the max subtraction, all finite in fp16 output (|o| <= max|v|).
//   nan_inf:  NaN/±Inf in not-yet-written cache rows (single elements, and the whole
//             region NaN), and in masked-out rows — never in o; a NaN in a live k row (its
//             group's heads all NaN) and in a live v element, +Inf in a live v; a NaN that
//             is live for the later queries of a chunk only; fully masked rows (o = 0).
//   shape:    T in {1, 7, 64} against S_max in {1, 65, 100, 129, 257, 300, 1000, 1537},
//             Hq/Hkv in {1/1, 3/1, 5/1, 5/5, 6/3, 12/2, 2/1, 3/3, 4/2}, Dh in {2, 3, 6, 64, 80, 96}.
std::vector<Case> attention_cases(InputClass input_class, DType dtype);

// The fused `qkv_attention` op: dims "T", "D", "S_max", "Hq", "Hkv", "Dh", "QKV"
// (= (Hq + 2·Hkv)·Dh) and "HqDh" (= Hq·Dh), so that every tensor's shape is a list of dims;
// inputs "x" [T, D], "w_qkv" [QKV, D], "w_o" [D, HqDh], "k_cache", "v_cache" [Hkv, S_max, Dh]
// of dtype, "mask" where a case has one; params "pos", "heads", "kv_heads", "head_dim"
// (decimal integers), "theta" (number_text), "style" ("interleaved" or "half").
// x ~ N(0, 1), w_qkv ~ N(0, 1/D), w_o ~ N(0, 1/HqDh); the caches hold N(0, 1) at positions
// < pos ("already written") and garbage at positions >= pos (pos ... pos+T−1 are
// overwritten by the op, the rest is never to be read).
//   normal:   decode at 700 of 1024, a chunk of 16 at 100, prefill of 64 from 0, a padding
//             mask, Dh 128; both styles, theta 10000 and 500000.
//   boundary: cache length 1 (S_max = 1), pos = S_max − 1, pos + T = S_max (also from 0);
//             head_dim 64 and 128; MHA, GQA 8:1, MQA.
//   overflow: q and k rows of w_qkv and the old k ×4 and ×16 (logits far past 11.09, the
//             largest past double's exp range), old v with |v| in [6e4, 65504] (w_o scaled
//             by 0.1 so y stays finite in fp16), old k with |k| in [6e4, 65504].
//   nan_inf:  NaN in every cache row at positions >= pos (overwritten or never read), ±Inf
//             there too; NaN/Inf in masked-out old rows; a NaN in a live old k row (every
//             y row that sees it is NaN); a fully masked row (y row = 0).
//   shape:    T in {1, 7, 64}; D in {1, 72, 96, 136, 200, 256}; S_max in {1, 65, 257, 300,
//             1000, 1537}; Dh in {2, 6, 64, 80, 96}; Hq/Hkv in {1/1, 3/1, 6/2, 5/5, 2/1, 4/2}.
//
// Weight dtype (int8 weights are a second axis inside each class, because the gate's dtype
// axis is the activations' and caches'): after the float-weight cases above, every class
// repeats them from the streams "qkv_attention_int8/<class>/<t>" with int8 weights, named
// "w=int8 ...": each weight row times a per-channel factor 10^U[−span, span] (q/k rows of
// w_qkv span 0.5, its v rows 1.5, w_o 1; none in overflow, whose magnitudes are the point),
// then quantized symmetrically per channel, with inputs "w_qkv_scale" [QKV] and "w_o_scale"
// [D] (float32). Then the int8-only cases:
//   normal:   a zero x row (scale 0, exact zero rows in the cache); a 16-token GQA chunk;
//   boundary: scales spanning 1e-3 … 1e3 (v rows), rows of −128 in both weights, a zero
//             row next to a one-hot row;
//   nan_inf:  NaN in x[1, 5] (token 1's q, k, v all NaN, y rows 1 … 3 NaN), ±Inf in x.
std::vector<Case> qkv_attention_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
