// `npukit decode`: from a model and an NPU arch to tokens per second, the prompt's
// prefill time, a pooled KV-cache memory plan against the arch's DRAM and the share that
// falls back to the CPU (docs/decode.md). Every stage is simulated through its NPU
// schedule as `npukit sim` simulates it (tools/decode/plan.h).
#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>

#include "runtime/error.h"
#include "runtime/text.h"
#include "tools/commands.h"
#include "tools/decode/plan.h"
#include "tools/decode/plan_svg.h"
#include "tools/decode/report.h"
#include "tools/sim_helpers.h"

namespace npukit::cli {
namespace {

struct DecodeArgs {
  std::string model, arch = "edge-6tops", fallback = "cpu", weights = "fp16", kv = "fp16", format = "table", svg;
  // Text, parsed here: CLI11 saturates an out-of-range integer, so the message would name a
  // value the user never gave. "" = the default.
  std::string context, prompt = "128", batch = "1", block = "16";
};

// The default context: 1024 positions, or the model's cap when that is smaller.
constexpr int64_t kDefaultContext = 1024;

int64_t integer_argument(const char* flag, const std::string& text) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end)
    fail(Errc::invalid_argument, std::string(flag) + " " + text + ": must be an integer" +
                                     (ec == std::errc::result_out_of_range ? " below 2^63" : ""));
  return v;
}

// The largest batch planned: the attention core is simulated once and counted per
// sequence, but the projections' rows are walked tile by tile.
constexpr int64_t kMaxBatch = 4096;

void check_range(const char* flag, int64_t v, int64_t lo, int64_t hi, const std::string& why) {
  if (v < lo || v > hi)
    fail(Errc::invalid_argument, std::string(flag) + " " + std::to_string(v) + ": must be in [" + std::to_string(lo) +
                                     ", " + std::to_string(hi) + "]" + why);
}

int run_decode(const DecodeArgs& a) {
  if (a.format != "table" && a.format != "json") fail(Errc::invalid_argument, "--format " + a.format + ": must be table or json");
  decode::PlanRequest r;
  decode::MemoryRequest& m = r.memory;
  if (a.weights == "fp16") m.weights = decode::WeightType::fp16;
  else if (a.weights == "int8") m.weights = decode::WeightType::int8;
  else if (a.weights == "int4") m.weights = decode::WeightType::int4;
  else fail(Errc::invalid_argument, "--weights " + a.weights + ": must be fp16, int8 or int4");
  if (a.kv == "fp16") m.kv = decode::KvType::fp16;
  else if (a.kv == "int8") m.kv = decode::KvType::int8;
  else fail(Errc::invalid_argument, "--kv " + a.kv + ": must be fp16 or int8");
  try {
    r.model = decode::resolve_model(a.model);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, std::string("--model: ") + e.what());
  }
  m.context = a.context.empty() ? std::min(kDefaultContext, r.model.max_positions) : integer_argument("--context", a.context);
  m.prompt = integer_argument("--prompt", a.prompt);
  m.batch = integer_argument("--batch", a.batch);
  m.block = integer_argument("--kv-block", a.block);
  check_range("--context", m.context, 1, r.model.max_positions,
              " (the model's max_position_embeddings is " + std::to_string(r.model.max_positions) + ")");
  check_range("--prompt", m.prompt, 0, m.context, " (the prompt is part of the context, --context " + std::to_string(m.context) + ")");
  check_range("--batch", m.batch, 1, kMaxBatch, "");
  check_range("--kv-block", m.block, 1, 65536, " (positions per KV-cache block)");
  const sim::ArchSpec npu = arch_argument(a.arch);
  sim::ArchSpec cpu;
  try {
    cpu = sim::resolve_arch(a.fallback);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, std::string("--fallback-arch: ") + e.what());
  }
  try {
    const decode::Plan plan = decode::make_plan(r, npu, cpu);
    if (!a.svg.empty()) {
      try {
        decode::write_plan_svg(plan, a.svg);
      } catch (const std::runtime_error& e) {
        fail(Errc::invalid_argument, "--svg " + a.svg + ": " + e.what());
      }
    }
    if (a.format == "json")
      std::cout << decode::plan_json(plan).dump(2) << '\n';
    else
      std::cout << decode::format_plan(plan);
  } catch (const std::invalid_argument& e) {
    fail(Errc::invalid_argument, e.what());
  }
  return 0;
}

}  // namespace

void add_decode(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<DecodeArgs>();
  CLI::App* sub = app.add_subcommand("decode", "plan LLM decode on an NPU arch: tokens/s, prefill, memory, CPU fallback");
  sub->add_option("--model", args->model, "a model preset (" + join_names(decode::model_preset_names()) + ") or a Hugging Face config.json")->required();
  sub->add_option("--arch", args->arch, "an NPU preset or arch .yaml file (default: edge-6tops)");
  sub->add_option("--fallback-arch", args->fallback, "where ops the NPU cannot run go (default: cpu, the host preset)");
  sub->add_option("--weights", args->weights, "fp16 (default), int8 or int4 (memory-only: unpacked to int8 on chip)");
  sub->add_option("--kv", args->kv, "KV-cache dtype: fp16 (default) or int8 (memory-only)");
  sub->add_option("--context", args->context, "KV-cache positions each decode step attends to (default 1024, or the model's max_position_embeddings if smaller)");
  sub->add_option("--prompt", args->prompt, "prompt tokens for the prefill time, 0 for none (default 128)");
  sub->add_option("--batch", args->batch, "sequences decoded together (default 1)");
  sub->add_option("--kv-block", args->block, "positions per KV-cache pool block (default 16)");
  sub->add_option("--format", args->format, "table (default) or json");
  sub->add_option("--svg", args->svg, "write the plan as an SVG: per-op time per step and memory against capacity, stacked bars");
  sub->callback([args, &exit_code] { exit_code = run_decode(*args); });
}

}  // namespace npukit::cli
