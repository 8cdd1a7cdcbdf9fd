// The split (decode) attention kernel run token by token, as the attention op and
// qkv_attention both run it for T > 1 on a CPU (and for T = 1 everywhere): query t
// ([1, Hq, Dh] views of q and o) at its position as a scalar, with its mask row.
#pragma once

#include <cstdint>

#include "runtime/cpu_features.h"
#include "runtime/halide_threads.h"
#include "runtime/kernel_call.h"
#include "runtime/tensor.h"

namespace npukit {

// Whether the split kernel prefetches k and v rows ahead in software at `position` with
// `threads` Halide threads (the kernel's `prefetch` argument; ops/attention.h). AMD Zen 4
// stalled on most lines without it. On the Intel Xeon with AMX (Sapphire Rapids class) the
// hardware prefetchers alone ran 12–20% faster from S = 2048 up, on one thread and two
// (docs/performance.md, 2026-12-06 session 32); below position 1024 the prefetch still
// helped two threads (S = 512: 131–140 against 145–146 µs) but, once the version without it
// read its scores in runs (ops/attention.h, kScoreStreams), cost one thread 8–10% (186
// against 202 µs; session 36). Only that class was measured, so only it leaves them out;
// every other CPU keeps them (on that class a forced avx2 tier leaves out its L1 prefetch
// of k too).
inline bool decode_attention_prefetches(const CpuFeatures& f, int32_t position, int threads) {
  constexpr int32_t kXeonAmxPrefetchBelow = 1024;
  return !intel_amx_class(f) || (threads > 1 && position < kXeonAmxPrefetchBelow);
}

// For each token t of q ([T, Hq, Dh]): `masked` with mask row t where the call has a
// mask, else `unmasked` (which never reads its mask argument: one zero here), at
// position_of(t) (kept inside the cache by the caller's checks).
template <class Masked, class Unmasked, class PositionOf>
void attend_token_by_token(const Masked& masked, const Unmasked& unmasked, const Call& call, const TensorView& q,
                           const TensorView& k, const TensorView& v, const TensorView* mask, PositionOf position_of,
                           const TensorView& o) {
  float zero = 0.0f;
  const TensorView no_mask{&zero, DType::float32, {1, 1}, {}};
  const In kc{k}, vc{v};
  const int threads = halide_thread_count();
  for (int64_t t = 0; t < q.shape[0]; ++t) {
    const In qt{outer_slice(q, t)};
    const Out ot{outer_slice(o, t)};
    const int32_t position = position_of(t);
    const bool prefetch = decode_attention_prefetches(cpu_features(), position, threads);
    if (mask) {
      call_kernel(masked, call, qt, kc, vc, position, In{outer_slice(*mask, t)}, prefetch, ot);
    } else {
      call_kernel(unmasked, call, qt, kc, vc, position, In{no_mask}, prefetch, ot);
    }
  }
}

}  // namespace npukit
