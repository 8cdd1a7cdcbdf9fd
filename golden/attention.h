// Golden attention in double: the `attention` op (causal, grouped-query attention of rotated
// queries over a KV cache) and the fused `qkv_attention` op of one layer (projection, RoPE,
// cache update, attention, output projection), unfused and evaluated as written.
// Then (below) its input classes, the cases the gate runs a kernel
// on and checks against the reference, and the gate's hooks.
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

// ---- Section NPUKIT_GOLDEN_attention: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_attention

#include "golden/half.h"
#include "golden/per_token_quant.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("golden::attention: " + what);
}

void require_positive(const char* name, int64_t v) {
  if (v < 1) fail(fmt::format("{} = {} must be >= 1", name, v));
}

void check_heads(const char* hq_name, int64_t hq, const char* hkv_name, int64_t hkv) {
  require_positive(hq_name, hq);
  require_positive(hkv_name, hkv);
  if (hq % hkv != 0) {
    fail(fmt::format("{} = {} is not a multiple of {} = {}", hq_name, hq, hkv_name, hkv));
  }
}

void check_mask(const double* mask, int64_t T, int64_t S_max) {
  if (mask == nullptr) return;
  for (int64_t i = 0; i < T * S_max; ++i) {
    const double m = mask[i];
    if (std::isnan(m) || m == kInf) {
      fail(fmt::format("mask[{}, {}] = {} must be finite or -inf", i / S_max, i % S_max, number_text(m)));
    }
  }
}

// o[T, rows] = a[T, cols] · wᵀ with w [rows, cols], each sum in order c.
void project(const double* a, const double* w, int64_t T, int64_t rows, int64_t cols,
             double* out) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (int64_t c = 0; c < cols; ++c) acc += a[t * cols + c] * w[r * cols + c];
      out[t * rows + r] = acc;
    }
  }
}

int64_t integer_param(const Case& c, const std::string& name, int64_t fallback) {
  const auto it = c.params.find(name);
  if (it == c.params.end()) return fallback;
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size()) {
    fail(fmt::format("parameter {}='{}' is not an integer", name, it->second));
  }
  return v;
}

}  // namespace

void attention_core(const double* q, const double* k_cache, const double* v_cache,
                    const int64_t* positions, const double* mask, int64_t T, int64_t Hq,
                    int64_t Hkv, int64_t Dh, int64_t S_max, double* o) {
  if (T < 0) fail(fmt::format("T = {} must be >= 0", T));
  check_heads("Hq", Hq, "Hkv", Hkv);
  require_positive("Dh", Dh);
  require_positive("S_max", S_max);
  for (int64_t t = 0; t < T; ++t) {
    if (positions[t] < 0 || positions[t] >= S_max) {
      fail(fmt::format("positions[{}] = {} outside [0, S_max = {})", t, positions[t], S_max));
    }
  }
  check_mask(mask, T, S_max);

  const int64_t group = Hq / Hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(Dh));
  std::vector<int64_t> live;
  std::vector<double> s, acc(static_cast<size_t>(Dh));
  for (int64_t t = 0; t < T; ++t) {
    live.clear();
    for (int64_t j = 0; j <= positions[t]; ++j) {
      if (mask == nullptr || mask[t * S_max + j] != -kInf) live.push_back(j);
    }
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t g = h / group;
      const double* qr = q + (t * Hq + h) * Dh;
      double* orow = o + (t * Hq + h) * Dh;
      if (live.empty()) {
        for (int64_t d = 0; d < Dh; ++d) orow[d] = 0;
        continue;
      }
      s.assign(live.size(), 0);
      bool nan = false;
      for (size_t i = 0; i < live.size(); ++i) {
        const int64_t j = live[i];
        const double* kr = k_cache + (g * S_max + j) * Dh;
        double dot = 0;
        for (int64_t d = 0; d < Dh; ++d) dot += qr[d] * kr[d];
        double sj = dot * scale;
        if (mask != nullptr) sj = sj + mask[t * S_max + j];
        nan |= std::isnan(sj);
        s[i] = sj;
      }
      if (nan) {
        for (int64_t d = 0; d < Dh; ++d) orow[d] = kNaN;
        continue;
      }
      double m = -kInf;
      for (double sj : s) m = sj > m ? sj : m;
      double l = 0;
      for (double& sj : s) {
        sj = std::exp(sj - m);  // now e_j
        l += sj;
      }
      acc.assign(static_cast<size_t>(Dh), 0);
      for (size_t i = 0; i < live.size(); ++i) {
        const double* vr = v_cache + (g * S_max + live[i]) * Dh;
        for (int64_t d = 0; d < Dh; ++d) acc[static_cast<size_t>(d)] += s[i] * vr[d];
      }
      for (int64_t d = 0; d < Dh; ++d) orow[d] = acc[static_cast<size_t>(d)] / l;
    }
  }
}

void qkv_attention(const double* x, const double* w_qkv, const double* w_o, double* k_cache,
                   double* v_cache, const double* mask, int64_t T, int64_t D, int64_t S_max,
                   const QkvAttentionParams& p, double* y, const QkvInt8Scales* int8) {
  if (T < 0) fail(fmt::format("T = {} must be >= 0", T));
  require_positive("D", D);
  require_positive("S_max", S_max);
  check_heads("heads", p.heads, "kv_heads", p.kv_heads);
  if (p.head_dim < 2 || p.head_dim % 2 != 0) {
    fail(fmt::format("head_dim = {} must be even and >= 2 (RoPE pairs)", p.head_dim));
  }
  if (p.pos < 0) fail(fmt::format("pos = {} must be >= 0", p.pos));
  if (p.pos > S_max - T) {
    fail(fmt::format("pos + T = {} + {} exceeds S_max = {} (position {} is not in the cache)", p.pos, T, S_max,
                     p.pos + T - 1));
  }
  if (!(std::isfinite(p.theta) && p.theta >= 1)) {
    fail(fmt::format("theta = {} must be finite and >= 1", number_text(p.theta)));
  }
  check_mask(mask, T, S_max);

  const int64_t Hq = p.heads, Hkv = p.kv_heads, Dh = p.head_dim;
  const int64_t rows = (Hq + 2 * Hkv) * Dh;
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };

  // 1. Projection, then the split into q, k, v (per token: Hq·Dh, Hkv·Dh, Hkv·Dh columns).
  std::vector<double> qkv(n(T * rows));
  if (int8 != nullptr) {
    project_int8(x, w_qkv, int8->w_qkv_scale, T, rows, D, qkv.data());
  } else {
    project(x, w_qkv, T, rows, D, qkv.data());
  }
  std::vector<double> q(n(T * Hq * Dh)), k(n(T * Hkv * Dh)), v(n(T * Hkv * Dh));
  for (int64_t t = 0; t < T; ++t) {
    const double* row = qkv.data() + t * rows;
    for (int64_t i = 0; i < Hq * Dh; ++i) q[n(t * Hq * Dh + i)] = row[i];
    for (int64_t i = 0; i < Hkv * Dh; ++i) {
      k[n(t * Hkv * Dh + i)] = row[Hq * Dh + i];
      v[n(t * Hkv * Dh + i)] = row[(Hq + Hkv) * Dh + i];
    }
  }

  // 2. RoPE on q and k at their absolute positions.
  std::vector<int64_t> positions(n(T));
  for (int64_t t = 0; t < T; ++t) positions[n(t)] = p.pos + t;
  rope(q.data(), positions.data(), T, Hq, Dh, Dh, p.theta, p.style, q.data());
  rope(k.data(), positions.data(), T, Hkv, Dh, Dh, p.theta, p.style, k.data());

  // 3. The cache update, before any read.
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t g = 0; g < Hkv; ++g) {
      for (int64_t d = 0; d < Dh; ++d) {
        const size_t at = n((g * S_max + p.pos + t) * Dh + d);
        k_cache[at] = k[n((t * Hkv + g) * Dh + d)];
        v_cache[at] = v[n((t * Hkv + g) * Dh + d)];
        if (int8 != nullptr) {
          k_cache[at] = round_to_dtype(k_cache[at], int8->cache_dtype);
          v_cache[at] = round_to_dtype(v_cache[at], int8->cache_dtype);
        }
      }
    }
  }

  // 4. Attention over the cache; 5. the output projection.
  std::vector<double> o(n(T * Hq * Dh));
  attention_core(q.data(), k_cache, v_cache, positions.data(), mask, T, Hq, Hkv, Dh, S_max,
                 o.data());
  if (int8 != nullptr) {
    project_int8(o.data(), w_o, int8->w_o_scale, T, D, Hq * Dh, y);
  } else {
    project(o.data(), w_o, T, D, Hq * Dh, y);
  }
}

QkvAttentionParams qkv_attention_params(const Case& c) {
  QkvAttentionParams p;
  p.pos = integer_param(c, "pos", p.pos);
  p.heads = integer_param(c, "heads", p.heads);
  p.kv_heads = integer_param(c, "kv_heads", p.kv_heads);
  p.head_dim = integer_param(c, "head_dim", p.head_dim);
  if (const auto it = c.params.find("theta"); it != c.params.end()) {
    size_t used = 0;
    try {
      p.theta = std::stod(it->second, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != it->second.size()) {
      fail(fmt::format("parameter theta='{}' is not a number", it->second));
    }
  }
  if (const auto it = c.params.find("style"); it != c.params.end()) {
    const std::optional<RopeStyle> s = rope_style_from_name(it->second);
    if (!s) fail(fmt::format("parameter style='{}' is not one of interleaved, half", it->second));
    p.style = *s;
  }
  return p;
}

namespace {

std::vector<int64_t> positions_of(const Array& a) {
  std::vector<int64_t> p;
  p.reserve(a.values.size());
  for (double v : a.values) p.push_back(static_cast<int64_t>(v));
  return p;
}

const double* mask_of(const Case& c) {
  const auto it = c.inputs.find("mask");
  return it == c.inputs.end() ? nullptr : it->second.values.data();
}

}  // namespace

std::vector<double> attention_reference(const Case& c) {
  const int64_t T = c.dims.at("T"), Hq = c.dims.at("Hq"), Hkv = c.dims.at("Hkv"),
                Dh = c.dims.at("Dh"), S_max = c.dims.at("S_max");
  const std::vector<int64_t> positions = positions_of(c.inputs.at("positions"));
  std::vector<double> o(static_cast<size_t>(T * Hq * Dh));
  attention_core(c.inputs.at("q").values.data(), c.inputs.at("k_cache").values.data(),
                 c.inputs.at("v_cache").values.data(), positions.data(), mask_of(c), T, Hq, Hkv,
                 Dh, S_max, o.data());
  return o;
}

QkvAttentionResult qkv_attention_reference(const Case& c) {
  const int64_t T = c.dims.at("T"), D = c.dims.at("D"), S_max = c.dims.at("S_max");
  QkvAttentionResult r;
  r.k_cache = c.inputs.at("k_cache").values;
  r.v_cache = c.inputs.at("v_cache").values;
  r.y.resize(static_cast<size_t>(T * D));
  QkvInt8Scales int8;
  const auto sq = c.inputs.find("w_qkv_scale"), so = c.inputs.find("w_o_scale");
  if (sq != c.inputs.end() && so != c.inputs.end()) {
    int8.w_qkv_scale = sq->second.values.data();
    int8.w_o_scale = so->second.values.data();
    int8.cache_dtype = c.inputs.at("k_cache").dtype;
  }
  qkv_attention(c.inputs.at("x").values.data(), c.inputs.at("w_qkv").values.data(),
                c.inputs.at("w_o").values.data(), r.k_cache.data(), r.v_cache.data(),
                mask_of(c), T, D, S_max, qkv_attention_params(c), r.y.data(),
                int8.w_qkv_scale != nullptr ? &int8 : nullptr);
  return r;
}

}  // namespace npukit::golden

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>

#include "golden/case_builder.h"
#include "golden/half.h"
#include "golden/rope.h"

namespace npukit::golden {
namespace {

constexpr RopeStyle kInterleaved = RopeStyle::interleaved;
constexpr RopeStyle kHalf = RopeStyle::half;
// Garbage in cache rows a kernel must not read: far from N(0, 1), finite in fp16.
constexpr double kGarbageLo = 1e3, kGarbageHi = 3e4;

std::string range_text(int64_t lo, int64_t hi) {
  return lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." + std::to_string(hi);
}

// What both generators share beyond CaseBuilder: the causal mask and the garbage in cache
// rows that must not be read.
class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // mask[t_lo..t_hi), j_lo..j_hi)] = −Inf; the mask (all 0) is created on first use.
  void mask_block(int64_t t_lo, int64_t t_hi, int64_t j_lo, int64_t j_hi) {
    Case& c = last();
    const int64_t T = c.dims.at("T"), S = c.dims.at("S_max");
    if (!c.inputs.count("mask")) c.inputs["mask"] = make_constant(DType::float32, {T, S}, 0);
    Array& m = c.inputs["mask"];
    for (int64_t t = t_lo; t < std::min(t_hi, T); ++t) {
      for (int64_t j = j_lo; j < std::min(j_hi, S); ++j) m.values[static_cast<size_t>(t * S + j)] = -kInf;
    }
  }

 protected:
  // Garbage in the cache rows [lo, S_max) of both caches.
  void garbage_from(int64_t lo) {
    for (const char* name : {"k_cache", "v_cache"}) signed_uniform(name, kGarbageLo, kGarbageHi, {1, lo, kAll});
  }
};

// --- the attention op ---

class CoreBuilder : public Builder {
 public:
  using Builder::Builder;

  // q, k, v ~ N(0, 1), garbage past the largest position.
  void add(int64_t T, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max,
           std::vector<int64_t> positions, const std::string& pos_text) {
    Case& c = CaseBuilder::add(
        sizes_text({{"t", T}, {"hq", Hq}, {"hkv", Hkv}, {"dh", Dh}, {"s", S_max}}) + " pos=" + pos_text,
        {{"T", T}, {"Hq", Hq}, {"Hkv", Hkv}, {"Dh", Dh}, {"S_max", S_max}});
    c.inputs["q"] = normal("q", {T, Hq, Dh}, 0, 1);
    c.inputs["k_cache"] = normal("k_cache", {Hkv, S_max, Dh}, 0, 1);
    c.inputs["v_cache"] = normal("v_cache", {Hkv, S_max, Dh}, 0, 1);
    Array& p = c.inputs["positions"] = make_constant(DType::int32, {T}, 0);
    for (size_t k = 0; k < positions.size(); ++k) p.values.at(k) = static_cast<double>(positions[k]);
    garbage_from(*std::max_element(positions.begin(), positions.end()) + 1);
  }

  // Positions first, first + 1, ..., first + T − 1.
  void add_run(int64_t T, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max, int64_t first) {
    std::vector<int64_t> p(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) p[static_cast<size_t>(t)] = first + t;
    add(T, Hq, Hkv, Dh, S_max, p, range_text(first, first + T - 1));
  }

  void add_list(int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max,
                std::initializer_list<int64_t> positions) {
    std::string text;
    for (int64_t p : positions) text += (text.empty() ? "" : ",") + std::to_string(p);
    add(static_cast<int64_t>(positions.size()), Hq, Hkv, Dh, S_max, positions, text);
  }

  // Positions uniform in [0, S_max), drawn independently (repeats allowed).
  void add_random(int64_t T, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max) {
    // Drawn for the case about to be added, before add() appends it.
    const Array r = make_integers(stream("positions"), all().size(), DType::int32, {T}, 0, S_max - 1);
    std::vector<int64_t> p;
    for (double v : r.values) p.push_back(static_cast<int64_t>(v));
    add(T, Hq, Hkv, Dh, S_max, p, "~U[0," + std::to_string(S_max - 1) + "]");
  }
};

void core_normal(CoreBuilder& b) {
  b.add_list(32, 8, 128, 2048, {1500});
  b.add_random(4, 16, 4, 128, 1024);
  b.add_run(16, 8, 2, 64, 512, 300);
  b.add_run(64, 8, 8, 64, 128, 0);
  b.add_run(8, 8, 1, 128, 2048, 2040);
  b.add_run(8, 4, 1, 64, 256, 100);
  b.mask_block(0, kAll, 0, 10);
  b.note("mask j<10");
}

void core_boundary(CoreBuilder& b) {
  b.add_list(4, 4, 64, 1, {0});  // one live row: o = v[0]
  b.add_list(8, 1, 128, 64, {0});
  b.add_list(8, 1, 128, 2048, {2047});
  b.add_list(32, 4, 128, 2048, {2047, 0});
  b.add_run(12, 16, 2, 64, 512, 500);
  b.add_run(4, 8, 8, 128, 256, 252);
  b.add_list(32, 1, 64, 1024, {1023});
  b.add_list(8, 8, 64, 64, {63});
}

void core_overflow(CoreBuilder& b) {
  // Logits with a spread of ~16 (×4 on q and on k): most exceed fp16's exp range 11.09.
  b.add_run(4, 8, 2, 128, 512, 508);
  b.scale("q", 4);
  b.scale("k_cache", 4, {1, 0, 512});
  b.note("q,k x4");
  // Logits of ~1e4: beyond the exp range of fp32 (88.7) and of double (709.8).
  b.add_list(4, 1, 64, 256, {200, 255});
  b.signed_uniform("q", 100, 250);
  b.signed_uniform("k_cache", 100, 250, {1, 0, 256});
  b.note("|q|,|k|~U[100,250]");
  // Values at the top of fp16: o is a convex combination of them, so |o| <= 65504.
  b.add_run(4, 8, 2, 128, 1024, 1000);
  b.signed_uniform("v_cache", 6e4, 65504, {1, 0, 1004});
  b.note("|v|~U[6e4,65504]");
  b.add_run(3, 4, 4, 64, 300, 200);
  b.scale("q", 4);
  b.scale("k_cache", 4, {1, 0, 203});
  b.fill("v_cache", 65504, {1, 0, 203});
  b.note("q,k x4 v=65504");
  // q·k itself far past fp16's max (an fp16 accumulator overflows; fp32 does not).
  b.add_run(2, 4, 2, 128, 128, 100);
  b.signed_uniform("k_cache", 6e4, 65504, {1, 0, 102});
  b.note("|k|~U[6e4,65504]");
}

void core_nan_inf(CoreBuilder& b) {
  // Not yet written: past positions 103 nothing is read.
  b.add_run(4, 8, 2, 64, 256, 100);
  b.note("nan/inf past pos");
  b.set("k_cache", {0, 104, 0}, kNaN);
  b.set("v_cache", {1, 104, 5}, kNaN);
  b.set("k_cache", {1, 150, 3}, kInf);
  b.set("v_cache", {0, 200, 63}, -kInf);
  b.set("k_cache", {1, 255, 10}, -kInf);
  b.add_list(8, 2, 128, 1024, {700});
  b.fill("k_cache", kNaN, {1, 701});
  b.fill("v_cache", kNaN, {1, 701});
  b.note("all nan past pos");
  // Masked-out rows inside the causal range.
  b.add_run(4, 8, 2, 64, 256, 100);
  b.mask_block(0, kAll, 20, 40);
  b.fill("k_cache", kNaN, {1, 20, 30});
  b.fill("v_cache", kInf, {1, 25, 35});
  b.fill("k_cache", -kInf, {1, 35, 40});
  b.note("mask 20..39 nan/inf there");
  // Live: a NaN in k of kv head 1 (heads 4..7 all NaN), in v of kv head 0 at dim 5 (that
  // element of heads 0..3 NaN), +Inf in v of kv head 0 at dim 7.
  b.add_run(4, 8, 2, 64, 256, 100);
  b.set("k_cache", {1, 50, 3}, kNaN);
  b.set("v_cache", {0, 10, 5}, kNaN);
  b.set("v_cache", {0, 30, 7}, kInf);
  b.note("live nan k h1 j50, nan v h0 j10 d5, inf v h0 j30 d7");
  // Live only for the later queries of the chunk: queries at 100, 101 stay finite.
  b.add_run(4, 4, 1, 64, 128, 100);
  b.set("k_cache", {0, 102, 9}, kNaN);
  b.note("nan k j102");
  // Fully masked rows (t = 1 entirely, t = 2 up to its own position) give 0.
  b.add_run(4, 4, 2, 64, 128, 60);
  b.mask_block(1, 2, 0, kAll);
  b.mask_block(2, 3, 0, 63);
  b.fill("k_cache", kNaN, {1, 64});
  b.note("rows 1,2 fully masked");
  b.add_list(2, 1, 128, 16, {0});
  b.mask_block(0, 1, 0, 1);
  b.set("k_cache", {0, 0, 0}, kNaN);
  b.note("masked only row nan");
}

void core_shape(CoreBuilder& b) {
  b.add_list(1, 1, 2, 1, {0});
  b.add_list(3, 1, 80, 1000, {999});
  b.add_run(7, 6, 3, 96, 257, 250);
  b.add_random(7, 5, 5, 6, 65);
  b.add_run(7, 12, 2, 64, 1537, 1000);
  b.add_run(64, 4, 2, 64, 129, 65);
  b.add_random(64, 3, 3, 80, 300);
  b.add_run(64, 2, 1, 3, 100, 36);
  b.add_run(1, 5, 1, 96, 1537, 1536);
}

// --- the fused qkv_attention op ---

class FusedBuilder : public Builder {
 public:
  using Builder::Builder;

  void add(int64_t T, int64_t D, int64_t Hq, int64_t Hkv, int64_t Dh, int64_t S_max,
           int64_t pos, RopeStyle style, double theta = 10000) {
    const int64_t qkv = (Hq + 2 * Hkv) * Dh, hqdh = Hq * Dh;
    Case& c = CaseBuilder::add(
        sizes_text({{"t", T}, {"d", D}, {"hq", Hq}, {"hkv", Hkv}, {"dh", Dh}, {"s", S_max}, {"pos", pos}}) + " " +
            std::string(rope_style_name(style)),
        {{"T", T}, {"D", D}, {"S_max", S_max}, {"Hq", Hq}, {"Hkv", Hkv}, {"Dh", Dh}, {"QKV", qkv}, {"HqDh", hqdh}},
        {{"pos", std::to_string(pos)},
         {"heads", std::to_string(Hq)},
         {"kv_heads", std::to_string(Hkv)},
         {"head_dim", std::to_string(Dh)},
         {"theta", number_text(theta)},
         {"style", std::string(rope_style_name(style))}});
    if (theta != 10000) note("theta=" + std::to_string(static_cast<int64_t>(theta)));
    const auto sd = [](int64_t n) { return 1 / std::sqrt(static_cast<double>(n)); };
    c.inputs["x"] = normal("x", {T, D}, 0, 1);
    c.inputs["w_qkv"] = normal("w_qkv", {qkv, D}, 0, sd(D));
    c.inputs["w_o"] = normal("w_o", {D, hqdh}, 0, sd(hqdh));
    c.inputs["k_cache"] = normal("k_cache", {Hkv, S_max, Dh}, 0, 1);
    c.inputs["v_cache"] = normal("v_cache", {Hkv, S_max, Dh}, 0, 1);
    garbage_from(pos);
  }

  // Rows of w_qkv that make q and k (the first (Hq + Hkv)·Dh), and the old k (< pos), ×f.
  void scale_logits(double f) {
    const Case& c = last();
    const int64_t qk_rows = (c.dims.at("Hq") + c.dims.at("Hkv")) * c.dims.at("Dh");
    scale("w_qkv", f, rows(0, qk_rows));
    scale("k_cache", f, {1, 0, pos()});
    note("q,k x" + number_text(f));
  }

  int64_t pos() { return std::stoll(last().params.at("pos")); }

  // The weight-dtype axis: case i's float weights (after its edits) become int8 weights with
  // per-output-channel scales, as a framework quantizes a checkpoint. Row n of w_qkv and w_o
  // is first multiplied by 10^U[−span, span] (span_qk for the q and k rows of w_qkv, span_v
  // for its v rows, span_o for w_o: the scales then span those orders of magnitude), then
  // ws[n] = fp32(max_c |w[n, c]| / 127) (1 for a zero row) and w_int = clamp(round(w / ws),
  // −127, 127). The inputs w_qkv_scale and w_o_scale are added; the name gains "w=int8".
  // A case whose weights are int8 already is left as it is.
  void to_int8(size_t i, double span_qk, double span_v, double span_o) {
    Case& c = all().at(i);
    if (c.inputs.at("w_qkv").dtype == DType::int8) return;
    const int64_t qk_rows = (c.dims.at("Hq") + c.dims.at("Hkv")) * c.dims.at("Dh");
    quantize(c, "w_qkv", i, [&](int64_t n) { return n < qk_rows ? span_qk : span_v; });
    quantize(c, "w_o", i, [&](int64_t) { return span_o; });
    c.name = "w=int8 " + c.name;
  }
  void to_int8(double span_qk, double span_v, double span_o) { to_int8(index(), span_qk, span_v, span_o); }
  void all_to_int8(double span_qk, double span_v, double span_o) {
    for (size_t i = 0; i < all().size(); ++i) to_int8(i, span_qk, span_v, span_o);
  }

 private:
  template <typename Span>
  void quantize(Case& c, const std::string& name, uint64_t i, Span span) {
    Array& w = c.inputs.at(name);
    const int64_t N = w.shape.at(0), K = w.shape.at(1);
    const Array u = make_uniform(stream(name + "_channel_factor"), i, DType::float64, {N}, -1, 1);
    Array q = make_constant(DType::int8, {N, K}, 0);
    Array scale = make_constant(DType::float32, {N}, 1);
    for (int64_t n = 0; n < N; ++n) {
      const double f = std::pow(10.0, span(n) * u.values[static_cast<size_t>(n)]);
      double m = 0;
      for (int64_t k = 0; k < K; ++k) m = std::max(m, std::fabs(w.values[static_cast<size_t>(n * K + k)] * f));
      const double ws = m > 0 ? round_to_dtype(m / 127, DType::float32) : 1.0;
      scale.values[static_cast<size_t>(n)] = ws;
      for (int64_t k = 0; k < K; ++k) {
        const double r = std::nearbyint(w.values[static_cast<size_t>(n * K + k)] * f / ws);
        q.values[static_cast<size_t>(n * K + k)] = std::min(127.0, std::max(-127.0, r));
      }
    }
    w = std::move(q);
    c.inputs[name + "_scale"] = std::move(scale);
  }
};

void fused_normal(FusedBuilder& b) {
  b.add(1, 512, 8, 2, 64, 1024, 700, kInterleaved);
  b.add(16, 256, 4, 4, 64, 256, 100, kHalf, 500000);
  b.add(64, 512, 8, 2, 64, 128, 0, kHalf);
  b.add(8, 256, 4, 1, 64, 64, 40, kInterleaved, 500000);
  b.mask_block(0, kAll, 0, 5);
  b.note("mask j<5");
  b.add(4, 512, 4, 2, 128, 512, 300, kHalf);
}

void fused_boundary(FusedBuilder& b) {
  b.add(1, 256, 2, 1, 128, 1, 0, kHalf);
  b.add(1, 256, 4, 4, 64, 512, 511, kInterleaved);
  b.add(8, 512, 8, 1, 64, 128, 120, kHalf, 500000);
  b.add(4, 512, 16, 2, 64, 1024, 1000, kInterleaved);
  b.add(2, 512, 4, 1, 128, 2048, 2046, kHalf);
  b.add(16, 256, 4, 2, 64, 16, 0, kInterleaved);
}

void fused_overflow(FusedBuilder& b) {
  b.add(4, 256, 4, 2, 64, 256, 200, kHalf);
  b.scale_logits(4);
  b.add(4, 256, 4, 1, 64, 128, 60, kInterleaved);
  b.scale_logits(16);
  // The old v at the top of fp16; w_o ×0.1 keeps y (~0.1·|v|) finite in fp16.
  b.add(2, 256, 4, 1, 128, 512, 500, kHalf);
  b.signed_uniform("v_cache", 6e4, 65504, {1, 0, 500});
  b.scale("w_o", 0.1);
  b.note("|v|~U[6e4,65504] w_o x0.1");
  b.add(2, 256, 2, 2, 64, 128, 100, kInterleaved, 500000);
  b.signed_uniform("k_cache", 6e4, 65504, {1, 0, 100});
  b.note("|k|~U[6e4,65504]");
}

void fused_nan_inf(FusedBuilder& b) {
  // pos ... pos+T−1 are overwritten before they are read; beyond is never read.
  b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
  b.fill("k_cache", kNaN, {1, 60});
  b.fill("v_cache", kNaN, {1, 60});
  b.note("nan at j>=pos");
  b.add(1, 256, 4, 1, 64, 256, 100, kInterleaved);
  b.fill("k_cache", kInf, {1, 100, 101});
  b.fill("v_cache", -kInf, {1, 100, 101});
  b.set("k_cache", {0, 200, 1}, kNaN);
  b.set("v_cache", {0, 255, 63}, kInf);
  b.note("inf at j=pos, nan/inf past");
  // Masked-out old rows.
  b.add(4, 256, 4, 2, 64, 128, 60, kInterleaved);
  b.mask_block(0, kAll, 10, 20);
  b.fill("k_cache", kNaN, {1, 10, 15});
  b.fill("v_cache", kInf, {1, 15, 20});
  b.note("mask 10..19 nan/inf there");
  // A live NaN in an old k row of kv head 1: heads 2, 3 of every query are NaN, so all of y.
  b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
  b.set("k_cache", {1, 30, 7}, kNaN);
  b.note("live nan k h1 j30");
  // Fully masked row 2 gives y[2, :] = 0.
  b.add(4, 256, 4, 2, 64, 128, 60, kInterleaved);
  b.mask_block(2, 3, 0, kAll);
  b.fill("k_cache", kNaN, {1, 64});
  b.note("row 2 fully masked");
}

void fused_shape(FusedBuilder& b) {
  b.add(1, 1, 1, 1, 2, 1, 0, kHalf);
  b.add(1, 72, 3, 1, 6, 65, 64, kInterleaved);
  b.add(7, 200, 6, 2, 2, 257, 250, kHalf);
  b.add(7, 96, 5, 5, 80, 1000, 500, kInterleaved);
  b.add(64, 136, 2, 1, 64, 300, 129, kHalf);
  b.add(64, 256, 4, 2, 96, 1537, 1000, kInterleaved, 500000);
}

// Cases that only the int8-weight path has: quantization edge cases on the activations
// and weights, each turned to int8 (with its own scale spans) before any int8 edit.
void fused_int8_extras(FusedBuilder& b) {
  if (b.input_class() == InputClass::normal) {
    // A zero token: its scale is 0, its q, k and v exactly 0 (a 0 row in the cache).
    b.add(8, 256, 4, 2, 64, 128, 40, kHalf);
    b.fill("x", 0.0, {0, 3, 4});
    b.note("x row 3 = 0");
    b.to_int8(0.5, 1.5, 1.5);
    // Fp16 x rounds to exact multiples of s more often; chunk over a GQA 4:1 layer.
    b.add(16, 512, 8, 2, 64, 256, 200, kInterleaved);
    b.to_int8(0.5, 1.5, 1.5);
  }
  if (b.input_class() == InputClass::boundary) {
    // Per-channel scales spanning six orders of magnitude on v and w_o.
    b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
    b.to_int8(0.5, 3, 1);
    b.note("scales 1e-3..1e3");
    // The int8 minimum −128 (never produced by symmetric quantization, still valid input).
    b.add(2, 256, 4, 1, 64, 64, 10, kInterleaved);
    b.to_int8(0, 0, 0);
    b.fill("w_qkv", -128, {0, 0, 64});
    b.fill("w_o", -128, {0, 0, 1});
    b.note("w=-128 rows");
    // One token in a chunk is all zeros and one holds a single nonzero value.
    b.add(4, 512, 8, 2, 64, 64, 0, kHalf);
    b.fill("x", 0.0, {0, 1, 2});
    b.fill("x", 0.0, {0, 2, 3});
    b.set("x", {2, 7}, 3.0);
    b.to_int8(0, 1, 1);
    b.note("x row 1 = 0, row 2 one-hot");
  }
  if (b.input_class() == InputClass::nan_inf) {
    // A NaN in x[1, 5]: token 1's scale is NaN, its q, k, v all NaN; later queries read
    // its k, so y rows 1..3 are NaN and row 0 is finite.
    b.add(4, 256, 4, 2, 64, 128, 60, kHalf);
    b.to_int8(0.5, 1, 1);
    b.set("x", {1, 5}, kNaN);
    b.note("x[1,5]=nan");
    // +Inf in x[2, 0] and −Inf in x[3, 9] behave the same way.
    b.add(4, 256, 4, 2, 64, 128, 60, kInterleaved);
    b.to_int8(0.5, 1, 1);
    b.set("x", {2, 0}, kInf);
    b.set("x", {3, 9}, -kInf);
    b.note("x[2,0]=inf x[3,9]=-inf");
  }
}

}  // namespace

std::vector<Case> attention_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  CoreBuilder b("attention", input_class, dtype);
  build_class<CoreBuilder>(b, {core_normal, core_boundary, core_overflow, core_nan_inf, core_shape});
  return b.take();
}

std::vector<Case> qkv_attention_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  std::vector<Case> cases;
  // The weight-dtype axis: the class's cases with float weights (in `dtype`), then again,
  // from their own streams, with int8 weights, then the int8-only cases.
  for (const bool int8 : {false, true}) {
    FusedBuilder b(int8 ? "qkv_attention_int8" : "qkv_attention", input_class, dtype);
    build_class<FusedBuilder>(b, {fused_normal, fused_boundary, fused_overflow, fused_nan_inf, fused_shape});
    if (int8) {
      fused_int8_extras(b);
      // Logit-scaled and near-65504 cases keep their magnitudes: no channel factors there.
      const bool overflow = input_class == InputClass::overflow;
      b.all_to_int8(overflow ? 0 : 0.5, overflow ? 0 : 1.5, overflow ? 0 : 1);
    }
    for (Case& c : b.take()) cases.push_back(std::move(c));
  }
  return cases;
}

}  // namespace npukit::golden

#endif  // NPUKIT_GOLDEN_attention


// ---- Section NPUKIT_GATE_HOOKS_attention: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_attention

// The gate's hooks for attention: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/attention.cpp is the rest of the op; libnpukit.so links none of this).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  // Dot products of length Dh and sums over up to S_max positions in fp32: the reduction
  // defaults. An output is a convex combination of v rows, so its fp32 sums err relative
  // to max |v|, not to itself: where v's signs cancel the output to much less than max |v|
  // (the overflow class: |v| near 65504, outputs near 1e3 and below), those roundings are
  // many ulps of the output. Allow them as an absolute term, 4 · √n roundings of max |v|
  // over n positions (the npu-sim fp16 kernel's worst, measured: 0.035 at max |v| 6.5e4
  // and n ≈ 1000, against 0.5 allowed; a wrong position or weight moves an output by about
  // max |v| / n = 65, a wrong head by about max |v|).
  golden::Tolerance t = golden::default_tolerance(dtype, /*reduction=*/true);
  t.max_zero_ratio = 1.0;  // fully masked rows are zeros on purpose
  const double max_v = golden::max_abs_finite(c.inputs.at("v_cache"));
  const double n = static_cast<double>(c.inputs.at("v_cache").shape.at(1));  // S_max bounds the positions
  const double fp32_sums = 4 * std::sqrt(n) * 0x1p-24 * max_v;
  if (fp32_sums > t.atol) {
    t.atol = fp32_sums;
    t.reason += "; plus 4 sqrt(S_max) fp32 roundings of max |v| absolute (" + fmt::format("{:.3g}", fp32_sums) +
                "): outputs are weighted means of v whose signs may cancel";
  }
  return t;
}

}  // namespace

GateHooks attention_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::attention_cases;
  gate.reference = [](const golden::Case& c) {
    return std::map<std::string, std::vector<double>>{{"o", golden::attention_reference(c)}};
  };
  gate.tolerance = tolerance;
  gate.nan_contract =
      "Query t attends to cache positions 0 ... positions[t] that the mask leaves live; no other position is "
      "read, so NaN or Inf there never reaches the output. A fully masked row gives 0. A NaN score in a live "
      "position makes that head's output NaN; a NaN in a live v element reaches that element.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_attention
