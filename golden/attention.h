// Golden attention in double: the `attention` op (causal, grouped-query attention of rotated
// queries over a KV cache) and the fused `qkv_attention` op of one layer (projection, RoPE,
// cache update, attention, output projection), unfused and evaluated as written.
// Then its input classes (golden/attention_cases.cpp): the cases the gate runs a
// kernel on and checks against the reference.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "golden/rope.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// The `attention` op. Row-major q and o of [T, Hq, Dh], k_cache and v_cache of
// [Hkv, S_max, Dh], positions of [T] (any order, repeats allowed), mask of [T, S_max] or
// nullptr. Query head h reads kv head g = h / (Hq / Hkv).
//
// Query t attends to the cache positions j that are live for it: j <= positions[t] (causal)
// AND mask[t, j] != −Inf (both apply; the mask cannot re-open a future position). Positions
// that are not live are skipped: their q·k, k and v are never read, so whatever they hold
// (NaN, Inf, garbage not yet written) cannot reach o. For each (t, h), over live j only:
//   s_j = (Σ_d q[t, h, d] · k_cache[g, j, d]) · (1/√Dh) + mask[t, j]
//         (the dot summed in order d = 0, 1, ..., 1/√Dh = 1.0 / std::sqrt(Dh) in double,
//          the mask term added only when a mask is given; finite mask values are allowed
//          and simply added, though the op's contract uses 0 and −Inf);
//   m   = max_j s_j;   e_j = exp(s_j − m);   l = Σ_j e_j;
//   o[t, h, d] = (Σ_j e_j · v_cache[g, j, d]) / l        (sums in increasing j).
// The max subtraction keeps every e_j in [0, 1] and l >= 1, so logits far beyond the
// exp range of fp16 (11.09), fp32 (88.7) or even double (709.8) are exact to rounding.
//
// NaN/Inf contract, per (t, h) (plain IEEE evaluation of the formula above over live j):
// - no live position (every j <= positions[t] masked): o[t, h, :] = 0, not NaN;
// - a NaN in a live score (a NaN in q[t, h, :] or in a live k row) makes o[t, h, :] all NaN
//   (handled explicitly: m would otherwise depend on where std::max meets the NaN);
// - a live score of +Inf (Inf in q or in a live k) gives m = +Inf and exp(Inf − Inf) = NaN:
//   all NaN; live scores that are all −Inf give the same (−Inf − −Inf); a −Inf score among
//   finite ones gets weight 0;
// - a NaN in a live v_cache[g, j, d] makes o[t, h, d] NaN, even when e_j underflows to 0
//   (0 · NaN = NaN); ±Inf there gives ±Inf, or NaN where e_j = 0 or Infs of both signs meet.
// So a NaN in a live position propagates to the heads that read it: all of o[t, h, :] for
// one in k, element d for one in v; a NaN in a position that is not live never does.
//
// Requirements, else std::invalid_argument naming the argument: T >= 0; Hq, Hkv, Dh,
// S_max >= 1; Hq % Hkv == 0; 0 <= positions[t] < S_max; no NaN or +Inf in mask.
void attention_core(const double* q, const double* k_cache, const double* v_cache,
                    const int64_t* positions, const double* mask, int64_t T, int64_t Hq,
                    int64_t Hkv, int64_t Dh, int64_t S_max, double* o);

// The parameters of `qkv_attention` (their names in a Case: "pos", "heads", "kv_heads",
// "head_dim", "theta", "style").
struct QkvAttentionParams {
  int64_t pos = 0;        // absolute position of the first of the T new tokens
  int64_t heads = 1;      // Hq
  int64_t kv_heads = 1;   // Hkv
  int64_t head_dim = 2;   // Dh; RoPE rotates all of it (rotary_dim = head_dim)
  double theta = 10000;
  RopeStyle style = RopeStyle::half;
};

// The fused `qkv_attention` op of one layer, for T new tokens at positions pos ... pos+T−1.
// Row-major x [T, D]; w_qkv [(Hq + 2·Hkv)·Dh, D]: rows of the Hq query heads first (head h in
// rows h·Dh ... h·Dh + Dh − 1), then the Hkv key heads, then the Hkv value heads;
// w_o [D, Hq·Dh]; k_cache, v_cache [Hkv, S_max, Dh], updated in place; mask [T, S_max] or
// nullptr; y [T, D]. Steps, each on its own double array:
//   1. qkv[t, r] = Σ_c x[t, c] · w_qkv[r, c]      (sum in order c), split into
//      q [T, Hq, Dh], k [T, Hkv, Dh], v [T, Hkv, Dh];
//   2. q and k rotated by golden::rope at positions pos + t, rotary_dim = head_dim, theta,
//      style;
//   3. k_cache[g, pos + t, :] = rotated k[t, g, :] and v_cache[g, pos + t, :] = v[t, g, :]
//      (v is not rotated) for every t and g; no other cache entry is written, and every
//      cache entry at pos ... pos+T−1 is written before any query reads the cache;
//   4. o = attention_core(rotated q, k_cache, v_cache, positions pos + t, mask): query t
//      attends to cache positions 0 ... pos + t not masked out, i.e. to the entries already
//      in the cache below pos, and to the new tokens up to and including itself;
//   5. y[t, c] = Σ_r o[t, r] · w_o[c, r], o read head-major as [T, Hq·Dh] (o[t, h·Dh + d]),
//      sum in order r.
// The cache holds doubles here: a kernel that stores fp16 rounds the entries it writes, and
// its later reads see the rounded values; the tolerance covers that.
//
// NaN/Inf: cache entries at positions >= pos + T (not yet written) and the old contents at
// pos ... pos+T−1 (overwritten first) never reach y, nor do masked entries; otherwise
// attention_core's contract applies, and the projections mix every head into every output
// column, so a NaN that reaches o[t, h, :] makes the whole row y[t, :] NaN. A fully masked
// query row gives o = 0 and so y[t, :] = 0. NaN/Inf in x, w_qkv or w_o follow IEEE through
// the sums (a NaN in x[t, :] reaches the cache at pos + t, and so every later query).
//
// Requirements, else std::invalid_argument naming the argument: T >= 0; D, S_max >= 1;
// heads, kv_heads >= 1 with heads % kv_heads == 0; head_dim even and >= 2; pos >= 0 and
// pos + T <= S_max (a position >= S_max is an error); theta finite and >= 1; mask as for
// attention_core.
//
// Int8 weights (`int8` not null): w_qkv and w_o hold int8 values, w_qkv_scale [QKV] and
// w_o_scale [D] their per-output-channel scales, and steps 1 and 5 are
// golden::project_int8 (golden/per_token_quant.h: x, then o rounded from double to fp32,
// quantized per token, exact integer sums, dequantized in fp32) instead of the double sums;
// everything else is as above. So a NaN or Inf anywhere in x[t, :] makes token t's q, k, v
// all NaN, and one anywhere in o[t, :] makes y[t, :] all NaN; a zero row projects to 0.
// The new cache rows are stored rounded to `cache_dtype` (the caches' storage type), so that
// attention and o see what the kernel's cache holds: quantizing o turns any difference in o
// into whole-step flips of q (an error of ε in o moves y by a full step s with probability
// ~ε/s), so the fp16 cache's rounding, which the float path's tolerance absorbs, must be
// modelled here for the int8 path's y to be checked tightly.
struct QkvInt8Scales {
  const double* w_qkv_scale = nullptr;
  const double* w_o_scale = nullptr;
  DType cache_dtype = DType::float64;
};
void qkv_attention(const double* x, const double* w_qkv, const double* w_o, double* k_cache,
                   double* v_cache, const double* mask, int64_t T, int64_t D, int64_t S_max,
                   const QkvAttentionParams& params, double* y, const QkvInt8Scales* int8 = nullptr);

// The parameters of a qkv_attention case as the gate binds them: integers with std::stoll,
// theta with std::stod, style by name; a missing one takes its default. Bad text:
// std::invalid_argument.
QkvAttentionParams qkv_attention_params(const Case& c);

// attention_core on a case of attention_cases(): dims "T", "Hq", "Hkv", "Dh", "S_max",
// inputs "q", "k_cache", "v_cache", "positions" and "mask" where present. Returns o.
std::vector<double> attention_reference(const Case& c);

// qkv_attention on a case of qkv_attention_cases(): y, and the caches after the update; int8
// weights where the case has the inputs "w_qkv_scale" and "w_o_scale".
struct QkvAttentionResult {
  std::vector<double> y, k_cache, v_cache;
};
QkvAttentionResult qkv_attention_reference(const Case& c);


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
