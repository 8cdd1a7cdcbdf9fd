#include "tools/decode/plan.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>

#include "simulator/analysis/op_simulation.h"
#include "simulator/report/table.h"
#include "simulator/simulate.h"

namespace npukit::decode {

namespace {

struct StageSim {
  double time_us = 0;
  std::string bound;
  int64_t dram_bytes = 0, macs = 0;
  sim::Dtype dtype = sim::Dtype::fp16;
  std::string error;  // the first rule error: the arch cannot run it as scheduled
};

int64_t g_simulations = 0;

// One stage on one arch, as `npukit sim` analyses it; cached by everything that shapes it.
const StageSim& simulate_stage(const schedules::npu::NpuStage& s, const sim::ArchSpec& arch) {
  static std::mutex mutex;
  static std::map<std::string, StageSim> cache;
  std::string key = arch.origin + "|" + arch.name + "|" + s.op + "|" +
                    (s.schedule ? std::to_string(reinterpret_cast<uintptr_t>(s.schedule)) : "") + "|" + s.dtype + "|" +
                    sim::format_shape(s.shape);
  for (const auto& [k, v] : s.params) key += "|" + k + "=" + v;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  StageSim out;
  try {
    const sim::ResolvedRequest rr = sim::resolve_stage(s, arch);
    const sim::SimResult r = sim::simulate(sim::analyse_resolved(rr, rr.knobs, arch), arch, false);
    out.time_us = r.cost.time_us;
    out.bound = sim::to_string(r.cost.bound);
    out.dram_bytes = r.analysis.dram_bytes();
    out.macs = r.analysis.macs();
    out.dtype = r.analysis.dtype;
    for (const sim::Violation& v : r.violations)
      if (v.severity == sim::Violation::error && out.error.empty()) out.error = v.rule + ": " + v.message;
  } catch (const std::invalid_argument& e) {
    // The analysis refuses shapes whose tiles it would walk for minutes; the planner has no
    // --schedule, so say what to shrink instead.
    const std::string why = e.what();
    const bool tiles = why.find("tiles: the analysis walks every tile") != std::string::npos;
    throw std::invalid_argument(s.label + " (" + (s.op.empty() ? s.schedule->op : s.op) + " " + sim::format_shape(s.shape) +
                                ") on " + arch.name + ": " + why +
                                (tiles ? "; for npukit decode: a shorter --prompt or a smaller --batch" : ""));
  }
  ++g_simulations;
  return cache.emplace(key, out).first->second;
}

// Why `arch` cannot run the stage, or "": a rule error (the rules say what the unit
// lacks), or products in a dtype its matrix unit lacks that the schedule moved to the
// vector unit (the CPU's matrix path takes them).
std::string cannot_run(const StageSim& npu, const sim::ArchSpec& arch, const schedules::npu::NpuStage& s,
                       const sim::ArchSpec& cpu) {
  if (!npu.error.empty()) return npu.error;
  if (npu.macs > 0 || arch.matrix.supports(npu.dtype)) return "";
  const StageSim& host = simulate_stage(s, cpu);
  if (host.macs == 0) return "";  // vector work on both
  return std::string("matrix_dtype: ") + arch.name + "'s matrix unit has no " + sim::to_string(npu.dtype) +
         " (the schedule moved the products to the vector unit)";
}

void add_items(PassResult& pass, const std::vector<PlanItem>& items, int64_t times, const sim::ArchSpec& npu,
               const sim::ArchSpec& cpu) {
  const double link_gbps = std::min(npu.dram.bandwidth_gbps, cpu.dram.bandwidth_gbps);
  for (const PlanItem& it : items) {
    const StageSim& n = simulate_stage(it.stage, npu);
    OpRow row;
    row.group = it.group;
    row.label = it.stage.label;
    row.op = it.stage.op.empty() ? it.stage.schedule->op : it.stage.op;
    row.shape = sim::format_shape(it.stage.shape);
    row.runs = it.count * times;
    row.note = it.note;
    const double runs = static_cast<double>(row.runs);
    row.fallback_reason = cannot_run(n, npu, it.stage, cpu);
    if (row.fallback_reason.empty()) {
      row.time_us = runs * n.time_us;
      row.dram_bytes = row.runs * n.dram_bytes;
      row.bound = n.bound;
    } else {
      const StageSim& c = simulate_stage(it.stage, cpu);
      if (!c.error.empty())
        throw std::invalid_argument(it.stage.label + ": neither " + npu.name + " (" + row.fallback_reason + ") nor " +
                                    cpu.name + " (" + c.error + ") can run it");
      // The hand-over: what the stage reads and writes besides what stays in DRAM for
      // either unit (weights, KV cache) crosses once each way, at the slower memory.
      const int64_t moved = std::max<int64_t>(0, c.dram_bytes - it.resident_bytes);
      row.transfer_us = runs * (static_cast<double>(moved) / (link_gbps * 1e3) + 2 * kHandoverUs);
      row.time_us = runs * c.time_us + row.transfer_us;
      row.dram_bytes = row.runs * (c.dram_bytes + moved);
      row.bound = c.bound;
      row.unit = "cpu";
      pass.fallback_time_us += row.time_us;
      pass.fallback_bytes += row.dram_bytes;
    }
    pass.time_us += row.time_us;
    pass.dram_bytes += row.dram_bytes;
    pass.rows.push_back(std::move(row));
  }
}

void finish(PassResult& pass) {
  for (OpRow& r : pass.rows) r.share = pass.time_us > 0 ? r.time_us / pass.time_us : 0;
}

// The embedding lookup: one fp16 row per token, read at the DRAM bandwidth (no schedule:
// a gather of `rows` rows is a copy, counted by its bytes).
OpRow embedding_row(const ModelConfig& m, int64_t rows, const sim::ArchSpec& npu) {
  OpRow r;
  r.group = "head";
  r.label = "embedding lookup";
  r.op = "(bytes / bandwidth)";
  r.shape = "rows=" + std::to_string(rows) + " hidden=" + std::to_string(m.hidden);
  r.runs = 1;
  r.dram_bytes = rows * m.hidden * 2 * 2;  // read the row, write the residual
  r.time_us = static_cast<double>(r.dram_bytes) / (npu.dram.bandwidth_gbps * 1e3) + npu.dram.latency_ns / 1e3;
  r.bound = "bandwidth";
  return r;
}

PassResult run_pass(const ModelConfig& m, WeightType w, const PassShape& p, int64_t logit_rows, const sim::ArchSpec& npu,
                    const sim::ArchSpec& cpu) {
  PassResult pass;
  OpRow emb = embedding_row(m, p.tokens * p.seqs, npu);
  pass.time_us += emb.time_us;
  pass.dram_bytes += emb.dram_bytes;
  pass.rows.push_back(emb);
  add_items(pass, decoder_layer(m, w, p, npu), m.layers, npu, cpu);
  add_items(pass, model_head(m, w, logit_rows), 1, npu, cpu);
  finish(pass);
  return pass;
}

}  // namespace

int64_t stage_simulations() { return g_simulations; }

Plan make_plan(const PlanRequest& r, const sim::ArchSpec& npu, const sim::ArchSpec& cpu) {
  Plan plan;
  plan.request = r;
  plan.model = r.model.name;
  plan.arch = npu.name;
  plan.fallback_arch = cpu.name;
  const MemoryRequest& mr = r.memory;
  plan.memory = plan_memory(r.model, mr, npu.dram.bytes);
  // Refused before any simulation.
  if (!plan.memory.fits()) throw std::invalid_argument("memory plan: " + plan.memory.overflow_text(npu.name));
  PassShape decode;
  decode.tokens = 1;
  decode.seqs = mr.batch;
  decode.context = mr.context;
  plan.decode = run_pass(r.model, mr.weights, decode, mr.batch, npu, cpu);
  plan.token_time_us = plan.decode.time_us;
  plan.tokens_per_s = plan.token_time_us > 0 ? static_cast<double>(mr.batch) * 1e6 / plan.token_time_us : 0;
  if (mr.prompt > 0) {
    PassShape pre;
    pre.tokens = mr.prompt;
    pre.seqs = 1;
    pre.context = mr.prompt;
    pre.prefill = true;
    plan.prefill = run_pass(r.model, mr.weights, pre, 1, npu, cpu);
    plan.prefill_time_us = plan.prefill.time_us;
  }
  if (mr.weights == WeightType::int4)
    plan.notes.push_back(
        std::string("int4 weights run as int4_gemm's NPU schedule (groups of ") + std::to_string(kInt4Group) +
        " along K; it reads fp32 group scales where the memory plan counts fp16): " +
        (npu.matrix.supports(sim::Dtype::int4)
             ? "the matrix unit multiplies the nibbles"
             : "int4 is memory-only on " + npu.name +
                   ", whose matrix unit has no int4: the vector unit unpacks each group to int8 before it, and the "
                   "simulation counts that work"));
  if (mr.kv == KvType::int8)
    plan.notes.push_back("kv int8 is memory-only: the memory plan holds int8 K/V (+ an fp16 scale per position and "
                         "head), but no NPU attention schedule reads int8 caches, so the time is the fp16-cache attention's");
  plan.notes.push_back("the MLP's gate and up projections are one GEMM of 2 x intermediate_size outputs; every layer's "
                       "input norm is add_rms_norm (the first layer's plain rms_norm is not modelled apart)");
  if (mr.batch > 1)
    plan.notes.push_back("batch " + std::to_string(mr.batch) +
                         ": projections, RoPE and cache writes run on all rows at once; the attention core runs once per "
                         "sequence over its own cache");
  if (plan.decode.fallback_flagged())
    plan.notes.push_back("FALLBACK over " + std::to_string(static_cast<int>(100 * kFallbackFlag + 0.5)) + "%: the CPU takes " + std::to_string(static_cast<int>(100 * plan.decode.fallback_time_share() + 0.5)) +
                         "% of the decode time and " + std::to_string(static_cast<int>(100 * plan.decode.fallback_byte_share() + 0.5)) +
                         "% of its bytes: the NPU is not worth it for this model and dtype");
  return plan;
}

}  // namespace npukit::decode
