// The attention NPU schedule: ops/attention's split (flash-decoding) algorithm, for one
// query token (decode) or a block of them (prefill, define_attention_split_tokens). The
// cache is cut into splits of `split` positions; one task is (split, kv head[, tile of
// query tokens]), and the tasks are dealt to the cores. A task keeps the group's q, its scores, the
// softmax weights, the running max and sum and the output accumulator on chip and streams
// its K and V rows in double-buffered blocks of `block` positions; the tasks' partials
// (max, Σ, Σ·v per head) go to DRAM and an exact combine rescales them by exp(m_c − max).
// Splits past the position (a scalar int Param, so the analysis evaluates every causal
// loop bound) are never computed.
//
// q·kᵀ and p·v run on the matrix unit in fp16 where the unit has fp16 and its tile fits
// the decode product (positions × Dh × the head block of 4, accumulator readable by the
// vector unit); elsewhere (int8-only units, fp32 caches, Ascend's L0C) they run on the
// vector unit and are costed as vector work.
#pragma once

#include <cstdint>

#include "runtime/op_spec.h"
#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

struct AttentionBlocks {
  int block = 64;      // K/V positions per DMA block (and per matrix tile)
  int split = 256;     // positions per task (a multiple of block)
  bool double_buffer = true;
  int tokens = 1;      // query tokens per task (prefill; 1 for decode)
};

// Whether q·kᵀ and p·v can run on `arch`'s matrix unit for a cache of `element_bytes`
// (see the header comment); the vector unit otherwise.
bool attention_on_matrix(const sim::ArchSpec& arch, int64_t element_bytes);

// The vector width the softmax work uses on `arch`: whole aligned vectors of the vector
// buffer, at least one head block (4 fp32).
int attention_softmax_lanes(const sim::ArchSpec& arch);

// The largest block (256 … 16) whose double-buffered K and V blocks fit beside the task's
// scores, weights, q and accumulator (single-buffered only when nothing fits twice), and
// the split that deals the (split, kv head) tasks most evenly to the cores.
AttentionBlocks choose_attention_blocks(const sim::ArchSpec& arch, int64_t element_bytes, int64_t T, int64_t s_max,
                                        int64_t heads, int64_t kv_heads, int64_t head_dim, bool on_matrix);

// q [T, Hq, Dh] (Halide (d, h, t)), k_cache and v_cache [Hkv, S_max, Dh] ((d, s, g)) of
// `type`; mask [T, S_max] fp32 when `masked`. Decode (T = 1): int param "position".
// Prefill: positions [T] int32 and int param "max_position" (their maximum); a task takes
// `tokens` query tokens and shares each K and V block among them. The knobs are int
// params: "block", "split_blocks" (a split is that many blocks) and, in a prefill,
// "tokens" (AttentionBlocks; one lowering serves every choice). Output
// "attention_npu" (d, h, t), of `type`. `on_matrix`: see attention_on_matrix (forcing it
// where the unit lacks the dtype makes the rules say so).
NpuPipeline attention_npu_pipeline(const sim::ArchSpec& arch, Halide::Type type, bool masked, bool on_matrix,
                                   bool double_buffer, bool prefill);

}  // namespace npukit::schedules::npu
