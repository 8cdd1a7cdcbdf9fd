#include "tools/decode/memory_plan.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace npukit::decode {

int64_t checked_mul(int64_t a, int64_t b, const std::string& what) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) throw std::invalid_argument(what + ": the size overflows 64 bits");
  return out;
}
int64_t checked_add(int64_t a, int64_t b, const std::string& what) {
  int64_t out = 0;
  if (__builtin_add_overflow(a, b, &out)) throw std::invalid_argument(what + ": the size overflows 64 bits");
  return out;
}

std::string format_bytes(int64_t b) {
  if (b >= 1000000000) return fmt::format("{:.2f} GB", static_cast<double>(b) / 1e9);
  if (b >= 1000000) return fmt::format("{:.1f} MB", static_cast<double>(b) / 1e6);
  return fmt::format("{} B", b);
}

namespace {

// Every weight the model holds (the sizes come from the config, already bounded by 2^24
// each, so layer sums fit; the multiplications by layers are still checked).
int64_t weight_bytes(const ModelConfig& m, WeightType w) {
  const int64_t D = m.hidden, F = m.intermediate, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  int64_t layer = weight_matrix_bytes(D, q + 2 * kv, w) + weight_matrix_bytes(q, D, w) +
                  weight_matrix_bytes(D, 2 * F, w) + weight_matrix_bytes(F, D, w) + 2 * D * 2;  // two fp16 norms
  int64_t total = checked_mul(layer, m.layers, "weights");
  // The LM head is stored in the weights' dtype (decode streams it whole every step); an
  // untied embedding table stays fp16 beside it (one row is looked up per token), a tied
  // one is the LM head's matrix itself (the lookup dequantizes its row).
  total = checked_add(total, weight_matrix_bytes(D, m.vocab, w), "weights");
  if (!m.tie_embeddings) total = checked_add(total, checked_mul(m.vocab, D * 2, "embeddings"), "weights");
  return checked_add(total, D * 2, "weights");  // the final norm
}

// The live tensors of a pass of `rows` rows, the largest at once: the residual, the norm's
// output, the fp32 QKV rows, the attention output, the fp32 gate/up rows and the SiLU
// product, and the fp32 logits of `logit_rows`. The intermediates the stages pass through
// DRAM are counted as these tensors (each is in one of them).
int64_t activation_bytes(const ModelConfig& m, int64_t rows, int64_t logit_rows) {
  const int64_t D = m.hidden, F = m.intermediate, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  const int64_t per_row = 2 * D * 2 + (q + 2 * kv) * 4 + q * 4 + 2 * F * 4 + F * 2;
  return checked_add(checked_mul(rows, per_row, "activations"), checked_mul(logit_rows, m.vocab * 4, "logits"),
                     "activations");
}

}  // namespace

std::string MemoryPlan::overflow_text(const std::string& arch) const {
  std::string sum;
  for (const MemoryPart& p : parts) sum += (sum.empty() ? "" : " + ") + p.name + " " + format_bytes(p.bytes);
  std::string s = sum + " = " + format_bytes(total) + " exceeds " + arch + "'s dram.bytes = " + format_bytes(capacity) +
                  " by " + format_bytes(total - capacity);
  s += "; largest context at this batch: " + (max_context > 0 ? std::to_string(max_context) : std::string("none")) +
       ", largest batch at this context: " + (max_batch > 0 ? std::to_string(max_batch) : std::string("none"));
  return s;
}

MemoryPlan plan_memory(const ModelConfig& m, const MemoryRequest& r, int64_t capacity) {
  MemoryPlan p;
  p.capacity = capacity;
  // int8 K/V keep one fp16 scale per position and head (the per-token quantization the
  // kit's int8 paths use), so a head's position is head_dim + 2 bytes.
  const int64_t per_head = r.kv == KvType::fp16 ? m.head_dim * 2 : m.head_dim + 2;
  p.kv_bytes_per_token = checked_mul(checked_mul(m.layers, 2 * m.kv_heads, "kv cache"), per_head, "kv cache");
  p.kv_block_bytes = checked_mul(p.kv_bytes_per_token, r.block, "--kv-block");
  const int64_t blocks_per_seq = (r.context + r.block - 1) / r.block;
  p.kv_blocks = checked_mul(blocks_per_seq, r.batch, "--batch x --context");
  const int64_t kv = checked_mul(p.kv_blocks, p.kv_block_bytes, "kv cache");
  const int64_t weights = weight_bytes(m, r.weights);
  // The largest pass: a decode step of every sequence, or the prompt's prefill (whose
  // attention partials and logits of the last token are small beside its rows).
  const int64_t act = std::max(activation_bytes(m, r.batch, r.batch), activation_bytes(m, r.prompt, 1));
  p.parts = {{"weights", weights}, {"kv cache", kv}, {"activations", act}};
  p.total = checked_add(checked_add(weights, kv, "memory"), act, "memory");
  if (capacity == 0) return p;
  // Largest context at this batch: whole blocks for every sequence in what is left.
  const int64_t left = capacity - weights - act;
  if (left > 0) {
    const int64_t blocks = left / checked_mul(p.kv_block_bytes, r.batch, "kv cache");
    p.max_context = std::min(checked_mul(blocks, r.block, "context"), m.max_positions);
  }
  // Largest batch at this context: each sequence adds its blocks and its decode rows
  // (activation_bytes is linear in the rows); the prompt's pass must fit beside them too.
  const int64_t kv_seq = checked_mul(blocks_per_seq, p.kv_block_bytes, "kv cache");
  const int64_t per_seq = checked_add(kv_seq, activation_bytes(m, 1, 1), "memory");
  const int64_t prompt_act = activation_bytes(m, r.prompt, 1);
  if (capacity > weights) {
    int64_t b = (capacity - weights) / per_seq;
    if (kv_seq > 0) b = std::min(b, capacity - weights > prompt_act ? (capacity - weights - prompt_act) / kv_seq : 0);
    p.max_batch = b;
  }
  return p;
}

}  // namespace npukit::decode
