#include "tools/decode/model_config.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "runtime/closest_name.h"
#include "runtime/text.h"

namespace npukit::decode {

namespace {

// hidden, intermediate, layers, heads, kv_heads, vocab, max_positions, tie: copied from each
// model's config.json on the Hugging Face Hub (the source names the repository).
ModelConfig make(std::string name, std::string source, int64_t hidden, int64_t inter, int64_t layers, int64_t heads,
                 int64_t kv, int64_t vocab, int64_t max_pos, bool tie) {
  ModelConfig m;
  m.name = std::move(name);
  m.source = std::move(source);
  m.hidden = hidden;
  m.intermediate = inter;
  m.layers = layers;
  m.heads = heads;
  m.kv_heads = kv;
  m.head_dim = hidden / heads;
  m.vocab = vocab;
  m.max_positions = max_pos;
  m.tie_embeddings = tie;
  return m;
}

const std::vector<ModelConfig>& presets() {
  static const std::vector<ModelConfig> p = {
      make("tinyllama-1.1b", "huggingface.co/TinyLlama/TinyLlama-1.1B-Chat-v1.0 config.json", 2048, 5632, 22, 32, 4,
           32000, 2048, false),
      make("llama-3.2-3b", "huggingface.co/meta-llama/Llama-3.2-3B config.json", 3072, 8192, 28, 24, 8, 128256,
           131072, true),
      make("llama-2-7b", "huggingface.co/meta-llama/Llama-2-7b-hf config.json", 4096, 11008, 32, 32, 32, 32000, 4096,
           false),
      make("llama-3-8b", "huggingface.co/meta-llama/Meta-Llama-3-8B config.json", 4096, 14336, 32, 32, 8, 128256,
           8192, false),
      make("qwen2-7b", "huggingface.co/Qwen/Qwen2-7B config.json (q/k/v biases not modelled)", 3584, 18944, 28, 28, 4,
           152064, 131072, false),
  };
  return p;
}

// Limits far above any published decoder that keep every product the planner forms
// (layers x 2 x kv_heads x head_dim x bytes x context x batch) checkable in int64.
constexpr int64_t kMaxDim = int64_t{1} << 24;

struct Reader {
  const nlohmann::json& j;
  const std::string& origin;

  [[noreturn]] void fail(const std::string& key, const std::string& rule) const {
    throw std::invalid_argument(origin + ": " + key + " = " + j.at(key).dump() + ": " + rule);
  }
  bool has(const std::string& key) const { return j.contains(key) && !j.at(key).is_null(); }
  int64_t integer(const std::string& key) const {
    if (!has(key)) throw std::invalid_argument(origin + ": " + key + ": missing (required)");
    const nlohmann::json& v = j.at(key);
    if (!v.is_number_integer()) fail(key, "must be an integer");
    if (v.is_number_unsigned() ? v.get<uint64_t>() > static_cast<uint64_t>(kMaxDim) : v.get<int64_t>() > kMaxDim)
      fail(key, "must be at most 2^24");
    const int64_t out = v.get<int64_t>();
    if (out <= 0) fail(key, "must be positive");
    return out;
  }
};

}  // namespace

std::vector<std::string> model_preset_names() {
  std::vector<std::string> n;
  for (const ModelConfig& m : presets()) n.push_back(m.name);
  return n;
}

ModelConfig model_preset(const std::string& name) {
  std::vector<std::string> names;
  for (const ModelConfig& m : presets()) {
    if (m.name == name) return m;
    names.push_back(m.name);
  }
  const std::string list = join_names(names), guess = closest_name(name, names);
  throw std::invalid_argument("model '" + name + "': unknown preset" + (guess.empty() ? "" : " (did you mean " + guess + "?)") +
                              "; presets: " + list + "; or give a path to a Hugging Face config.json");
}

ModelConfig parse_hf_config(const std::string& text, const std::string& origin) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::invalid_argument(origin + ": malformed JSON at byte " + std::to_string(e.byte) + " (a config.json is one object)");
  }
  if (!j.is_object()) throw std::invalid_argument(origin + ": (top level) = " + j.dump().substr(0, 40) + ": must be an object");
  const Reader r{j, origin};
  ModelConfig m;
  m.name = j.contains("_name_or_path") && j["_name_or_path"].is_string() ? j["_name_or_path"].get<std::string>() : origin;
  m.source = origin;
  m.hidden = r.integer("hidden_size");
  m.intermediate = r.integer("intermediate_size");
  m.layers = r.integer("num_hidden_layers");
  m.heads = r.integer("num_attention_heads");
  m.kv_heads = r.has("num_key_value_heads") ? r.integer("num_key_value_heads") : m.heads;
  m.vocab = r.integer("vocab_size");
  m.max_positions = r.integer("max_position_embeddings");
  if (r.has("tie_word_embeddings")) {
    if (!j["tie_word_embeddings"].is_boolean()) r.fail("tie_word_embeddings", "must be true or false");
    m.tie_embeddings = j["tie_word_embeddings"].get<bool>();
  }
  if (r.has("head_dim")) {
    m.head_dim = r.integer("head_dim");
  } else {
    if (m.hidden % m.heads != 0)
      r.fail("num_attention_heads", "must divide hidden_size = " + std::to_string(m.hidden) + " (or give head_dim)");
    m.head_dim = m.hidden / m.heads;
  }
  if (m.heads % m.kv_heads != 0)
    r.fail("num_key_value_heads", "must divide num_attention_heads = " + std::to_string(m.heads) + " (GQA groups)");
  if (m.head_dim % 2 != 0) throw std::invalid_argument(origin + ": head_dim = " + std::to_string(m.head_dim) + ": must be even (RoPE rotates pairs)");
  return m;
}

ModelConfig resolve_model(const std::string& arg) {
  const bool path = arg.find('/') != std::string::npos ||
                    (arg.size() > 5 && arg.compare(arg.size() - 5, 5, ".json") == 0);
  if (!path) return model_preset(arg);
  std::error_code ec;
  if (std::filesystem::is_directory(arg, ec)) throw std::invalid_argument(arg + ": is a directory (give the config.json in it)");
  std::ifstream f(arg);
  if (!f) throw std::invalid_argument(arg + ": cannot read");
  std::stringstream ss;
  ss << f.rdbuf();
  return parse_hf_config(ss.str(), arg);
}

}  // namespace npukit::decode
