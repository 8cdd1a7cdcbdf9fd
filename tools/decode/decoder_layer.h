// The planner's own description of one Llama-style decoder layer (and the model's head)
// as NPU stages at a model's shapes: the only place in the planner that names ops. Each
// item is a registered op's schedule or a stage-only pipeline (schedules/npu), simulated
// as `npukit sim` simulates it; the attention block is the qkv_attention composite's own
// stages, adjusted for the batch (each sequence's attention over its own cache) and, for
// int4 weights, with int4_gemm's schedule in place of each int8 GEMM and its dequantization.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "tools/decode/model_config.h"

namespace npukit::decode {

enum class WeightType { fp16, int8, int4 };
enum class KvType { fp16, int8 };
const char* to_string(WeightType w);
const char* to_string(KvType k);

// int4 weights: groups of this many along K share one fp16 scale (what GPTQ/AWQ default to).
constexpr int64_t kInt4Group = 128;

// One step of the plan: a stage (an op, or a stage-only schedule) at its shape, run
// `count` times per layer (or once, for the head).
struct PlanItem {
  std::string group;  // "attention", "mlp", "norm", "head"
  schedules::npu::NpuStage stage;
  int64_t count = 1;
  // DRAM bytes the stage reads that stay where they are whichever unit runs it (weights,
  // the KV cache): a fallback to the CPU moves only the rest.
  int64_t resident_bytes = 0;
  std::string note;  // how the stage stands for what it models (int4, batch)
};

// What one pass of the model runs: `tokens` new tokens for each of `seqs` sequences, each
// over a KV cache of `context` positions (decode: 1 token, B sequences, the context;
// prefill: the prompt, 1 sequence, context = the prompt).
struct PassShape {
  int64_t tokens = 1, seqs = 1, context = 1;
  bool prefill = false;
};

// One layer's items. `arch` picks the composite's stages (sim::request_stages).
std::vector<PlanItem> decoder_layer(const ModelConfig& m, WeightType w, const PassShape& p, const sim::ArchSpec& arch);
// The final norm and the LM head for the rows whose logits are needed (decode: every
// sequence's token; prefill: the last token).
std::vector<PlanItem> model_head(const ModelConfig& m, WeightType w, int64_t rows);

// Bytes of one K x N weight matrix in `w`: fp16 2 B; int8 1 B + an fp32 scale per output
// channel (int8_gemm's w_scale); int4 0.5 B + an fp16 scale per group of kInt4Group along K.
int64_t weight_matrix_bytes(int64_t K, int64_t N, WeightType w);

}  // namespace npukit::decode
