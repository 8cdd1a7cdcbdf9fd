// The decode memory plan: the weights, the KV cache as a pool of fixed-size blocks (each
// sequence takes whole blocks of `block` positions, so that its context grows block by
// block without reallocating or moving what is cached), and the activations and workspace
// of the largest pass, against the arch's DRAM capacity (dram.bytes). Every product of
// user-given sizes is overflow-checked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/decode/decoder_layer.h"
#include "tools/decode/model_config.h"

namespace npukit::decode {

struct MemoryRequest {
  WeightType weights = WeightType::fp16;
  KvType kv = KvType::fp16;
  int64_t context = 0, batch = 1, prompt = 0, block = 16;
};

struct MemoryPart {
  std::string name;
  int64_t bytes = 0;
};

struct MemoryPlan {
  std::vector<MemoryPart> parts;  // weights, kv cache, activations
  int64_t total = 0;
  int64_t capacity = 0;           // dram.bytes; 0 = the arch gives none
  int64_t kv_bytes_per_token = 0; // one position of one sequence, all layers, K and V
  int64_t kv_block_bytes = 0;     // one block of `block` positions
  int64_t kv_blocks = 0;          // blocks in the pool (per sequence x batch)
  int64_t max_context = 0;        // the largest context that fits at this batch (capped by the model), 0 if none
  int64_t max_batch = 0;          // the largest batch that fits at this context, 0 if none
  bool fits() const { return capacity == 0 || total <= capacity; }
  // "weights 6.4 GB + kv cache 1.2 GB + ... = X exceeds ... by Y": what overflows, by how much.
  std::string overflow_text(const std::string& arch) const;
};

// std::invalid_argument (one line naming the value) when a size overflows int64.
MemoryPlan plan_memory(const ModelConfig& m, const MemoryRequest& r, int64_t capacity);

// a * b, or std::invalid_argument naming `what` on overflow (user-given sizes).
int64_t checked_mul(int64_t a, int64_t b, const std::string& what);
int64_t checked_add(int64_t a, int64_t b, const std::string& what);

std::string format_bytes(int64_t bytes);  // "6.43 GB", "12.3 MB" or "512 B" (decimal units)

}  // namespace npukit::decode
