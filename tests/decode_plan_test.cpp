// npukit decode's planner (tools/decode): the seeds' arithmetic of issue 17 through the
// real stage simulations, the memory plan's sums, the CPU fallback and the model configs.
// Small contexts and no prefill keep it to a few seconds; the stage cache makes repeated
// shapes free.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "simulator/arch/arch_spec.h"
#include "tools/decode/model_config.h"
#include "tools/decode/plan.h"
#include "tools/decode/report.h"

namespace {

using namespace npukit::decode;
namespace sim = npukit::sim;

std::string read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// edge-6tops with its DRAM at `gbps` and DMA ports wide enough not to cap it (edge's 32 B
// per cycle per core is 96 GB/s on its 3 cores).
sim::ArchSpec edge_at(double gbps, const std::string& name) {
  std::string text = read(std::string(NPUKIT_ARCH_PRESET_DIR) + "/edge-6tops.yaml");
  auto replace = [&](const std::string& a, const std::string& b) {
    for (size_t at = text.find(a); at != std::string::npos; at = text.find(a, at + b.size())) text.replace(at, a.size(), b);
  };
  replace("bandwidth_gbps: 34.1", "bandwidth_gbps: " + std::to_string(gbps));
  replace("bytes_per_cycle: 32, setup", "bytes_per_cycle: 64, setup");
  replace("name: edge-6tops", "name: " + name);
  return sim::parse_arch_spec(text, name + ".yaml");
}

Plan plan(const ModelConfig& m, const sim::ArchSpec& arch, WeightType w, int64_t context = 16) {
  PlanRequest r;
  r.model = m;
  r.memory.weights = w;
  r.memory.context = context;
  r.memory.prompt = 0;
  return make_plan(r, arch, sim::preset("cpu"));
}

// What the seed's arithmetic reads per token: every layer's weights and the LM head.
double weight_bytes_per_token(const ModelConfig& m) {
  const double D = m.hidden, F = m.intermediate, q = m.heads * m.head_dim, kv = m.kv_heads * m.head_dim;
  return 2 * (m.layers * (D * (q + 2 * kv) + q * D + 3 * D * F) + D * m.vocab);
}

double gemm_time(const Plan& p) {
  double t = 0;
  for (const OpRow& r : p.decode.rows)
    if (r.op == "linear" || r.op == "int8_gemm" || r.op == "int4_gemm") t += r.time_us;
  return t;
}

ModelConfig qwen25_3b() { return parse_hf_config(read(std::string(NPUKIT_TEST_DATA) + "/qwen2.5-3b.config.json"), "qwen2.5-3b"); }

// "A 3B model in fp16 reads about 6 GB per token, so 20 tokens/s needs about 120 GB/s";
// LPDDR4X's 34 GB/s gives about 5.7. Qwen2.5-3B reads 6.17 GB: bandwidth / bytes is 19.4 and
// 5.5 tokens/s, a bound no plan may beat. The kit's schedules reach 92% of it at 120 GB/s
// (17.9 tokens/s: the 100-cycle DMA setup per tile weighs more as the DRAM gets faster)
// and 97% at 34.1 GB/s (5.35): within 10% of the seed's 5.7, 10.4% under its 20, whose
// 6 GB is itself 3% under the model's bytes; docs/decode.md.
TEST(DecodePlan, ThreeBillionFp16At120And34GBps) {
  const ModelConfig m = qwen25_3b();
  EXPECT_NEAR(weight_bytes_per_token(m), 6.17e9, 0.01e9);
  const double bound120 = 120e9 / weight_bytes_per_token(m), bound34 = 34.1e9 / weight_bytes_per_token(m);
  const Plan fast = plan(m, edge_at(120, "edge-120"), WeightType::fp16);
  EXPECT_LT(fast.tokens_per_s, bound120);
  EXPECT_GT(fast.tokens_per_s, 0.90 * bound120);
  EXPECT_NEAR(fast.tokens_per_s, 20, 0.11 * 20);
  const Plan lpddr4 = plan(m, sim::preset("edge-6tops"), WeightType::fp16);
  EXPECT_LT(lpddr4.tokens_per_s, bound34);
  EXPECT_GT(lpddr4.tokens_per_s, 0.95 * bound34);
  EXPECT_NEAR(lpddr4.tokens_per_s, 5.7, 0.10 * 5.7);
  EXPECT_EQ(lpddr4.decode.fallback_time_us, 0);
}

// Llama-3.2-3B (6.43 GB per token with its tied 128k-token LM head) on edge-6tops: within
// 10% of bandwidth / bytes; int8 weights cut the GEMMs' time 2x, int4 less (below). The
// whole step gains less:
// the rest (attention, norms, quantization; the int8 path's attention keeps q and o in
// fp32, which edge-6tops's matrix unit lacks, so it runs on the vector unit) is that share.
TEST(DecodePlan, QuantizedWeightsCutTheGemmTimeByTheirBytes) {
  const ModelConfig m = model_preset("llama-3.2-3b");
  const sim::ArchSpec& edge = sim::preset("edge-6tops");
  const Plan f = plan(m, edge, WeightType::fp16), i8 = plan(m, edge, WeightType::int8), i4 = plan(m, edge, WeightType::int4);
  EXPECT_NEAR(f.tokens_per_s, 34.1e9 / weight_bytes_per_token(m), 0.10 * 34.1e9 / weight_bytes_per_token(m));
  EXPECT_NEAR(gemm_time(f) / gemm_time(i8), 2.0, 0.2);
  // int4 runs as int4_gemm's schedule, which unpacks each group to int8 on edge's vector
  // unit (its matrix unit has no int4): 1.5 int8 operations a symmetric weight at 32 B a
  // cycle. That unpack, not the DRAM, bounds int4's GEMMs there: faster than int8's, but
  // by less than their bytes (0.516 B a weight against int8's 1 B + scales).
  const double bytes_ratio =
      double(weight_matrix_bytes(4096, 4096, WeightType::int8)) / weight_matrix_bytes(4096, 4096, WeightType::int4);
  EXPECT_GT(gemm_time(i8) / gemm_time(i4), 1.2);
  EXPECT_LT(gemm_time(i8) / gemm_time(i4), 0.9 * bytes_ratio);
  for (const OpRow& r : i4.decode.rows) {
    if (r.op == "int4_gemm") {
      EXPECT_EQ(r.bound, "compute") << r.label;
    }
  }
  // Where the vector unit keeps up (ascend-910b-like), int4 beats int8 by its bytes' share.
  const sim::ArchSpec& ascend = sim::preset("ascend-910b-like");
  const Plan a8 = plan(m, ascend, WeightType::int8), a4 = plan(m, ascend, WeightType::int4);
  EXPECT_GT(gemm_time(a8) / gemm_time(a4), 1.3);
  EXPECT_GT(a4.tokens_per_s, a8.tokens_per_s);
  // The step's speed-up is the GEMMs' bounded by what is not a GEMM.
  for (const Plan* q : {&i8, &i4}) {
    const double rest = 1 - gemm_time(*q) / q->token_time_us;
    const double gain = q->tokens_per_s / f.tokens_per_s, gemm_gain = gemm_time(f) / gemm_time(*q);
    EXPECT_LT(gain, gemm_gain);
    EXPECT_GT(gain, gemm_gain * (1 - rest) * 0.95) << "rest " << rest;
  }
  // Every distinct stage is simulated once per process: planning again simulates nothing.
  const int64_t before = stage_simulations();
  EXPECT_EQ(plan(m, edge, WeightType::int8).tokens_per_s, i8.tokens_per_s);
  EXPECT_EQ(stage_simulations(), before);
  // The table names the figures and every stage.
  const std::string table = format_plan(i8);
  for (const char* s : {"tokens/s", "quantize x", "qkv projection", "gate+up projection", "lm head", "kv pool", "fallback: 0.0%"})
    EXPECT_NE(table.find(s), std::string::npos) << s;
  EXPECT_FALSE(i4.notes.empty());
  EXPECT_NE(i4.notes[0].find("memory-only"), std::string::npos);
}

// Llama-2-7B decode at fp16, batch 1, context 2048 on the A100-like reference preset
// against LLM-Viewer's roofline (hahnyuan/LLM-Viewer, model_analyzer.py with
// hardware_params.py's nvidia_A100_80G: 2039 GB/s, 312 TFLOPS fp16). Every op of that
// decode step is memory bound there, so its time is its bytes / bandwidth: 14.313 GB a
// token (weights, the K and V cache read, activations, the LM head), 7.020 ms, 142.46
// tokens/s (the arithmetic: docs/simulator/validation.md). The planner moves 0.9% more
// bytes (the activation row reloaded per N tile) and loses the rest to the pipelines'
// prologues on few tiles per SM, the attention's 512 tasks on 108 SMs, DMA setups and the
// latency-bound small stages, which LLM-Viewer does not model: within 15%, never above.
TEST(DecodePlan, Llama2At7bOnA100LikeIsWithin15PercentOfLlmViewer) {
  const double llm_viewer_tokens_per_s = 142.46, llm_viewer_bytes = 14.313e9;
  const sim::ArchSpec a100 = sim::load_arch_spec(std::string(NPUKIT_ARCH_PRESET_DIR) + "/gpu/a100-like.yaml");
  const Plan p = plan(model_preset("llama-2-7b"), a100, WeightType::fp16, 2048);
  EXPECT_LT(p.tokens_per_s, llm_viewer_tokens_per_s);
  EXPECT_NEAR(p.tokens_per_s, llm_viewer_tokens_per_s, 0.15 * llm_viewer_tokens_per_s);
  EXPECT_NEAR(static_cast<double>(p.decode.dram_bytes), llm_viewer_bytes, 0.01 * llm_viewer_bytes);
  EXPECT_EQ(p.decode.fallback_time_us, 0);
}

// A decoder small enough that the slow paths (vector-unit GEMMs, CPU fallbacks) simulate fast.
ModelConfig tiny() {
  ModelConfig m;
  m.name = "tiny";
  m.hidden = 256;
  m.intermediate = 512;
  m.layers = 2;
  m.heads = 4;
  m.kv_heads = 2;
  m.head_dim = 64;
  m.vocab = 1024;
  m.max_positions = 128;
  return m;
}

// fp16 linears on an int8-only systolic array run on its vector unit: the planner moves
// them to the CPU preset, costs the hand-over and flags a share over 20%.
TEST(DecodePlan, Fp16OnAnInt8OnlyArrayFallsBackAndIsFlagged) {
  const Plan p = plan(tiny(), sim::preset("gemmini-default"), WeightType::fp16);
  int cpu = 0;
  for (const OpRow& r : p.decode.rows) {
    if (r.unit != "cpu") continue;
    ++cpu;
    EXPECT_NE(r.fallback_reason.find("matrix_dtype"), std::string::npos) << r.label;
    EXPECT_GT(r.transfer_us, 0) << r.label;
  }
  EXPECT_GT(cpu, 0);
  EXPECT_GT(p.decode.fallback_time_share(), kFallbackFlag);
  bool flagged = false;
  for (const std::string& n : p.notes) flagged = flagged || n.find("FALLBACK over 20%") != std::string::npos;
  EXPECT_TRUE(flagged);
  // Vector work (norms, RoPE, SiLU) stays on the array: the CPU would run it on its vector unit too.
  for (const OpRow& r : p.decode.rows) {
    if (r.op == "rope" || r.op == "silu_mul" || r.op == "add_rms_norm") {
      EXPECT_EQ(r.unit, "npu") << r.label;
    }
  }
}

// layers x 2 x kv_heads x head_dim x bytes x context x batch, in whole blocks.
TEST(DecodeMemory, KvCacheIsAPoolOfWholeBlocks) {
  const ModelConfig m = model_preset("llama-3-8b");
  MemoryRequest r;
  r.context = 1000;
  r.batch = 3;
  r.block = 16;
  const MemoryPlan p = plan_memory(m, r, int64_t{80} << 30);
  EXPECT_EQ(p.kv_bytes_per_token, 32 * 2 * 8 * 128 * 2);
  EXPECT_EQ(p.kv_blocks, 63 * 3);  // ceil(1000 / 16) per sequence
  EXPECT_EQ(p.parts[1].bytes, 63 * 3 * 16 * p.kv_bytes_per_token);
  EXPECT_TRUE(p.fits());
  EXPECT_EQ(p.max_context, 8192);  // the model's cap, not the memory
  // What fits is what fits: one more sequence than max_batch does not.
  MemoryRequest more = r;
  more.batch = p.max_batch;
  EXPECT_TRUE(plan_memory(m, more, int64_t{80} << 30).fits());
  more.batch = p.max_batch + 1;
  EXPECT_FALSE(plan_memory(m, more, int64_t{80} << 30).fits());
  // Llama-2-7B at fp16 does not fit the Pynq's 512 MiB, and says by how much.
  const MemoryPlan vta = plan_memory(model_preset("llama-2-7b"), r, 512ll << 20);
  EXPECT_FALSE(vta.fits());
  EXPECT_NE(vta.overflow_text("vta-default").find("exceeds vta-default's dram.bytes = 536.9 MB by"), std::string::npos)
      << vta.overflow_text("vta-default");
  EXPECT_EQ(vta.max_batch, 0);
  // Sizes that overflow 64 bits are refused, not wrapped.
  r.batch = int64_t{1} << 40;
  EXPECT_THROW(plan_memory(m, r, 0), std::invalid_argument);
}

TEST(DecodeModels, PresetsAndConfigErrors) {
  EXPECT_EQ(model_preset_names().size(), 5u);
  const ModelConfig l3 = model_preset("llama-3-8b");
  EXPECT_EQ(l3.kv_heads, 8);
  EXPECT_EQ(l3.head_dim, 128);
  EXPECT_NE(l3.source.find("huggingface.co/meta-llama/Meta-Llama-3-8B"), std::string::npos);
  try {
    model_preset("llama-3-8");
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean llama-3-8b?"), std::string::npos) << e.what();
  }
  const ModelConfig q = qwen25_3b();
  EXPECT_EQ(q.head_dim, 128);
  EXPECT_TRUE(q.tie_embeddings);
  auto error = [](const std::string& text) {
    try {
      parse_hf_config(text, "c.json");
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string ok = R"("intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100, "max_position_embeddings": 64)";
  EXPECT_EQ(error("{" + ok + "}"), "c.json: hidden_size: missing (required)");
  EXPECT_EQ(error(R"({"hidden_size": "32", )" + ok + "}"), "c.json: hidden_size = \"32\": must be an integer");
  EXPECT_EQ(error(R"({"hidden_size": 32.5, )" + ok + "}"), "c.json: hidden_size = 32.5: must be an integer");
  EXPECT_EQ(error(R"({"hidden_size": -32, )" + ok + "}"), "c.json: hidden_size = -32: must be positive");
  EXPECT_EQ(error(R"({"hidden_size": 99999999999, )" + ok + "}"), "c.json: hidden_size = 99999999999: must be at most 2^24");
  EXPECT_EQ(error(R"({"hidden_size": 30, )" + ok + "}"),
            "c.json: num_attention_heads = 4: must divide hidden_size = 30 (or give head_dim)");
  EXPECT_EQ(error(R"({"hidden_size": 32, "num_key_value_heads": 3, )" + ok + "}"),
            "c.json: num_key_value_heads = 3: must divide num_attention_heads = 4 (GQA groups)");
  EXPECT_EQ(error(R"({"hidden_size": 32, "tie_word_embeddings": 1, )" + ok + "}"),
            "c.json: tie_word_embeddings = 1: must be true or false");
  EXPECT_EQ(error("[1, 2]"), "c.json: (top level) = [1,2]: must be an object");
  EXPECT_EQ(error("{\"hidden_size\": "), "c.json: malformed JSON at byte 17 (a config.json is one object)");
  EXPECT_EQ(error(R"({"hidden_size": 32, )" + ok + "}"), "no error");
}

}  // namespace
