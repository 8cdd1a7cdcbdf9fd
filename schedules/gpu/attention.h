// GPU schedules of the attention core (ops/attention.h), one source for CUDA and OpenCL.
// All arithmetic in fp32 (the generators widen fp16 storage on load and narrow on store).
#pragma once

#include "Halide.h"
#include "ops/attention.h"

namespace npukit::schedules::gpu {

// The decode split kernel's structure for the GPU (ops::define_attention_decode): cache
// positions per split — one block per (split, kv head), so a 4096-position cache with 8
// kv heads gives 128 blocks, against 16 with the CPU's 2048; positions per block of the
// stats and Σ weight (one partial per thread, 32 threads per head); v rows per block of
// Σ weight · v.
constexpr int kDecodeSplit = 256;
constexpr int kDecodeStatsBlock = 32;
constexpr int kDecodeVBlock = 16;

// Prefill (T > 1), `out(d, h, t)` the stored output: the scores q·k/√Dh + mask of every
// (position, head, token) in one kernel, one thread per score; then per (head, token) one
// block: the max and Σ exp as two-level reductions (32 strided partials per thread in
// shared memory, then one pass over them), and Σ exp · v with one thread per column d.
void schedule_attention(ops::Attention& a, Halide::Func out, const Halide::Target& target);

// Decode (flash decoding), `out(d, h, t)` the stored output. Stage 1, one block per
// (split, kv head): the group's q, the split's scores (one thread per position, all the
// group's heads at once, so each k row is read once), the split's max and Σ exp as
// two-level reductions, the weights in shared memory, then Σ weight · v with one thread per
// column d and its accumulators in registers (each v row read once, coalesced). Stage 2,
// the exact combine over the splits, one small kernel per step.
void schedule_attention_decode(ops::AttentionDecode& a, Halide::Func out, bool masked, const Halide::Target& target);

}  // namespace npukit::schedules::gpu
