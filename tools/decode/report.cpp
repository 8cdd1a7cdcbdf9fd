#include "tools/decode/report.h"

#include "runtime/message.h"

namespace npukit::decode {

namespace {

std::string fixed(double v, int digits) { return fmt::format("{:.{}f}", v, digits); }

std::string pad(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

std::string percent(double share) { return fixed(100 * share, 1) + "%"; }

void pass_table(std::string& out, const PassResult& pass) {
  append(out, "  {:<32}{:<20}{:<40}{:<6}{:<13}{:<8}{:<10}{:<5}DRAM bytes\n", "op", "schedule", "shape", "runs", "time us",
         "share", "bound", "unit");
  for (const OpRow& r : pass.rows) {
    append(out, "  {}{}{}{}{}{}{}{}{}\n", pad(r.label, 32), pad(r.op, 20), pad(r.shape, 40), pad(std::to_string(r.runs), 6),
           pad(fixed(r.time_us, 1), 13), pad(percent(r.share), 8), pad(r.bound, 10), pad(r.unit, 5), r.dram_bytes);
    if (!r.fallback_reason.empty())
      append(out, "    falls back: {} (hand-over {} us)\n", r.fallback_reason, fixed(r.transfer_us, 1));
    if (!r.note.empty()) append(out, "    {}\n", r.note);
  }
  append(out, "  fallback: {} of the time, {} of the bytes\n", percent(pass.fallback_time_share()),
         percent(pass.fallback_byte_share()));
}

nlohmann::json pass_json(const PassResult& pass) {
  nlohmann::json ops = nlohmann::json::array();
  for (const OpRow& r : pass.rows) {
    nlohmann::json o{{"group", r.group},   {"label", r.label},         {"op", r.op},
                     {"shape", r.shape},   {"runs", r.runs},           {"time_us", r.time_us},
                     {"share", r.share},   {"bound", r.bound},         {"unit", r.unit},
                     {"dram_bytes", r.dram_bytes}, {"transfer_us", r.transfer_us}};
    if (!r.fallback_reason.empty()) o["fallback_reason"] = r.fallback_reason;
    if (!r.note.empty()) o["note"] = r.note;
    ops.push_back(std::move(o));
  }
  return ops;
}

nlohmann::json fallback_json(const PassResult& pass) {
  return {{"time_us", pass.fallback_time_us},
          {"time_share", pass.fallback_time_share()},
          {"bytes", pass.fallback_bytes},
          {"byte_share", pass.fallback_byte_share()},
          {"flagged", pass.fallback_flagged()}};
}

}  // namespace

std::string format_plan(const Plan& p) {
  const MemoryRequest& m = p.request.memory;
  std::string out;
  append(out, "decode plan  {} on {} (fallback {}): weights {}, kv {}, context {}, batch {}, prompt {}\n", p.model, p.arch,
         p.fallback_arch, to_string(m.weights), to_string(m.kv), m.context, m.batch, m.prompt);
  append(out, "tokens/s     {}  (one decode step {} us for {}{}; {} of DRAM traffic)\n", fixed(p.tokens_per_s, 2),
         fixed(p.token_time_us, 1), m.batch, m.batch == 1 ? " token" : " tokens", format_bytes(p.decode.dram_bytes));
  if (m.prompt > 0)
    append(out, "prefill      {} us for {} prompt tokens (time to first token)\n", fixed(p.prefill_time_us, 1), m.prompt);
  out += "\ndecode step (per op, all layers):\n";
  pass_table(out, p.decode);
  if (m.prompt > 0) {
    out += "\nprefill (per op, all layers):\n";
    pass_table(out, p.prefill);
  }
  const MemoryPlan& mem = p.memory;
  out += "\nmemory";
  for (const MemoryPart& part : mem.parts) append(out, "  {} {}", part.name, format_bytes(part.bytes));
  append(out, "  = {} of {}\n", format_bytes(mem.total),
         mem.capacity > 0 ? format_bytes(mem.capacity) : std::string("? (the arch spec gives no dram.bytes)"));
  append(out, "kv pool      {} blocks of {} positions ({} each, {} B per position)\n", mem.kv_blocks, m.block,
         format_bytes(mem.kv_block_bytes), mem.kv_bytes_per_token);
  if (mem.capacity > 0)
    append(out, "fits         largest context at batch {}: {}; largest batch at context {}: {}\n", m.batch,
           mem.max_context, m.context, mem.max_batch);
  for (const std::string& n : p.notes) append(out, "note         {}\n", n);
  return out;
}

nlohmann::json plan_json(const Plan& p) {
  const MemoryRequest& m = p.request.memory;
  const ModelConfig& c = p.request.model;
  nlohmann::json mem{{"capacity", p.memory.capacity},
                     {"total", p.memory.total},
                     {"kv_bytes_per_token", p.memory.kv_bytes_per_token},
                     {"kv_block_tokens", m.block},
                     {"kv_block_bytes", p.memory.kv_block_bytes},
                     {"kv_blocks", p.memory.kv_blocks},
                     {"max_context", p.memory.max_context},
                     {"max_batch", p.memory.max_batch},
                     {"fits", p.memory.fits()}};
  for (const MemoryPart& part : p.memory.parts) mem[part.name == "kv cache" ? "kv_cache" : part.name] = part.bytes;
  nlohmann::json j{{"model", {{"name", c.name}, {"source", c.source}, {"hidden_size", c.hidden},
                              {"intermediate_size", c.intermediate}, {"num_hidden_layers", c.layers},
                              {"num_attention_heads", c.heads}, {"num_key_value_heads", c.kv_heads},
                              {"head_dim", c.head_dim}, {"vocab_size", c.vocab},
                              {"max_position_embeddings", c.max_positions}, {"tie_word_embeddings", c.tie_embeddings}}},
                   {"arch", p.arch},
                   {"fallback_arch", p.fallback_arch},
                   {"weights", to_string(m.weights)},
                   {"kv", to_string(m.kv)},
                   {"context", m.context},
                   {"batch", m.batch},
                   {"prompt", m.prompt},
                   {"tokens_per_s", p.tokens_per_s},
                   {"token_time_us", p.token_time_us},
                   {"prefill_time_us", p.prefill_time_us},
                   {"decode_dram_bytes", p.decode.dram_bytes},
                   {"ops", pass_json(p.decode)},
                   {"prefill_ops", pass_json(p.prefill)},
                   {"memory", mem},
                   {"fallback", fallback_json(p.decode)},
                   {"prefill_fallback", fallback_json(p.prefill)},
                   {"notes", p.notes}};
  return j;
}

}  // namespace npukit::decode
