// The decoder shapes `npukit decode` plans for: a model preset (published Hugging Face
// configs, each with its source) or any config.json with LlamaForCausalLM-style keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace npukit::decode {

struct ModelConfig {
  std::string name, source;
  int64_t hidden = 0;        // hidden_size
  int64_t intermediate = 0;  // intermediate_size (the MLP's gate/up width)
  int64_t layers = 0;        // num_hidden_layers
  int64_t heads = 0;         // num_attention_heads
  int64_t kv_heads = 0;      // num_key_value_heads (GQA; = heads without the key)
  int64_t head_dim = 0;      // head_dim, or hidden_size / num_attention_heads
  int64_t vocab = 0;         // vocab_size
  int64_t max_positions = 0; // max_position_embeddings: the context cap
  bool tie_embeddings = false;  // tie_word_embeddings: the LM head is the embedding table
};

std::vector<std::string> model_preset_names();
// A preset by name; an unknown one throws std::invalid_argument with the closest and the list.
ModelConfig model_preset(const std::string& name);
// A Hugging Face config.json's text. Errors are std::invalid_argument, one line:
// "<origin>: <key> = <value>: <rule>" or "<origin>: <key>: missing (required)".
ModelConfig parse_hf_config(const std::string& json_text, const std::string& origin);
// A path (has '/' or ends in .json) is read and parsed; anything else is a preset name.
ModelConfig resolve_model(const std::string& name_or_path);

}  // namespace npukit::decode
