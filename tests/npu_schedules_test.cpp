// The NPU schedules of rope, attention (decode) and per_token_quant through the lowering pass, the rules
// and the cost model, on every preset at their default shapes; the decode-attention
// bandwidth validation (docs/simulator/validation.md); and what the rules say when a
// schedule puts fp16 products on a matrix unit that has only int8. Correctness on real
// data is the gate's (`npukit gate --target npu-sim:PRESET --op rope --op attention`,
// ctest gate_npu_sim).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "runtime/cpu_features.h"
#include "schedules/npu/attention.h"
#include "schedules/npu/per_token_quant.h"
#include "schedules/npu/rope.h"
#include "simulator/analysis/lowered_nest.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/simulate.h"

namespace npukit::sim {
namespace {

using schedules::npu::NpuPipeline;

const std::vector<std::string> kPresets = {"edge-6tops", "ascend-910b-like", "gemmini-default", "vta-default"};

Halide::Target analysis_target() {
  return Halide::Target(halide_cpu_target(cpu_features()))
      .with_feature(Halide::Target::NoAsserts)
      .with_feature(Halide::Target::NoBoundsQuery);
}

// Lowers `p`, reads its nest with dense buffers of the given extents (innermost first; the
// outputs' under their Func names) and the int params, and simulates it.
SimResult simulate_pipeline(NpuPipeline& p, const std::map<std::string, std::vector<int64_t>>& buffers,
                            const std::map<std::string, int64_t>& ints, const ArchSpec& arch, Dtype dtype,
                            bool strict = true) {
  const Halide::Internal::Stmt nest = capture_lowered_nest(p, analysis_target());
  if (std::getenv("NPU_NEST")) std::cerr << nest << "\n";  // what the analysis reads, for whoever debugs a rule
  Bindings env;
  for (const auto& [name, extents] : buffers) bind_dense_buffer(env, name, extents);
  for (const auto& [name, value] : ints) env[name] = value;
  OpAnalysis a = analyse_nest(nest, p.plan, p.op, p.output_funcs(), env);
  a.dtype = dtype;
  for (const auto& [name, value] : ints) a.schedule[name] = value;
  return simulate(a, arch, strict);
}

std::string violations_text(const SimResult& s) {
  std::string out;
  for (const Violation& v : s.violations) out += "  [" + v.rule + "] " + v.message + " — fix: " + v.suggestion + "\n";
  if (!s.violations.empty()) {
    for (const VectorWork& v : s.analysis.vector)
      out += "  vector work " + v.func + " in '" + v.buffer + "': " + std::to_string(v.lanes) + " lanes, accesses aligned to " +
             std::to_string(v.access_alignment) + " B, " + std::to_string(v.elements) + " elements\n";
  }
  return out;
}

int64_t tensor_bytes(const OpAnalysis& a, const std::string& tensor, Direction dir) {
  int64_t b = 0;
  for (const Transfer& t : a.transfers)
    if (t.tensor == tensor && t.direction == dir) b += t.total_bytes();
  return b;
}

struct RopeShape {
  int64_t tokens, heads, head_dim, rotary_dim;
};

SimResult simulate_rope(const ArchSpec& arch, bool f16, bool interleaved, const RopeShape& r) {
  const int64_t eb = f16 ? 2 : 4;
  const schedules::npu::RopeTiles t =
      schedules::npu::choose_rope_tiles(arch, r.tokens, r.heads, r.head_dim, r.rotary_dim, eb);
  // rotary_dim = head_dim as the op's default says it: 0.
  NpuPipeline p = schedules::npu::rope_npu_pipeline(arch, f16 ? Halide::Float(16) : Halide::Float(32), interleaved,
                                                    r.rotary_dim == r.head_dim ? 0 : static_cast<int>(r.rotary_dim),
                                                    t.double_buffer);
  const std::vector<int64_t> x = {r.head_dim, r.heads, r.tokens};
  return simulate_pipeline(p, {{"x", x}, {"positions", {r.tokens}}, {p.outputs[0].func, x}},
                           {{"tile_tokens", t.tokens}, {"tile_heads", t.heads}}, arch, f16 ? Dtype::fp16 : Dtype::fp32);
}

// Decode (one token, 32 heads of 128) and prefill (512 tokens), whole and partial rotary
// dims, both styles, fp16 and fp32: no violation, strict, on every preset; x is read once
// and y written once.
TEST(NpuSchedules, RopeIsStrictCleanOnEveryPreset) {
  for (const std::string& name : kPresets) {
    const ArchSpec& arch = preset(name);
    for (const RopeShape& r : {RopeShape{1, 32, 128, 128}, RopeShape{512, 32, 128, 128}, RopeShape{1, 32, 128, 64}}) {
      for (bool f16 : {true, false}) {
        for (bool interleaved : {false, true}) {
          SCOPED_TRACE(name + " tokens=" + std::to_string(r.tokens) + " rotary_dim=" + std::to_string(r.rotary_dim) +
                       (f16 ? " fp16" : " fp32") + (interleaved ? " interleaved" : " half"));
          const SimResult s = simulate_rope(arch, f16, interleaved, r);
          EXPECT_TRUE(s.violations.empty()) << violations_text(s);
          const int64_t bytes = r.tokens * r.heads * r.head_dim * (f16 ? 2 : 4);
          EXPECT_EQ(tensor_bytes(s.analysis, "x", Direction::in), bytes);
          EXPECT_EQ(tensor_bytes(s.analysis, "rope_npu", Direction::out), bytes);
          EXPECT_FALSE(s.analysis.vector.empty());
          EXPECT_GT(s.cost.total_cycles, 0);
        }
      }
    }
  }
}

// cos/sin are computed on the vector unit once per token tile, not per head: the
// prefill's angle work grows with tokens × rotary_dim / 2, its rotation with every element.
TEST(NpuSchedules, RopeComputesAnglesOncePerToken) {
  const ArchSpec& edge = preset("edge-6tops");
  const SimResult s = simulate_rope(edge, true, false, {512, 32, 128, 128});
  int64_t angle_elements = 0, rotated = 0;
  for (const VectorWork& v : s.analysis.vector) {
    if (v.func.rfind("cos_sin", 0) == 0) angle_elements += v.elements;
    if (v.func == "rope") rotated += v.elements;
  }
  EXPECT_EQ(angle_elements, 2 * 512 * 64);  // cos and sin (two stores) per token and pair, not per head
  EXPECT_GE(rotated, 512 * 32 * 128);
}

struct AttentionShape {
  int64_t s_max, heads, kv_heads, head_dim, position;
};

SimResult simulate_decode(const ArchSpec& arch, bool f16, const AttentionShape& a, bool on_matrix, bool strict = true) {
  const int64_t eb = f16 ? 2 : 4;
  const schedules::npu::AttentionBlocks b =
      schedules::npu::choose_attention_blocks(arch, eb, /*T=*/1, a.s_max, a.heads, a.kv_heads, a.head_dim, on_matrix);
  NpuPipeline p = schedules::npu::attention_npu_pipeline(arch, f16 ? Halide::Float(16) : Halide::Float(32),
                                                         /*masked=*/false, on_matrix, b.double_buffer, /*prefill=*/false);
  const std::vector<int64_t> q = {a.head_dim, a.heads, 1}, kv = {a.head_dim, a.s_max, a.kv_heads};
  return simulate_pipeline(p, {{"q", q}, {"k_cache", kv}, {"v_cache", kv}, {p.outputs[0].func, q}},
                           {{"position", a.position}, {"block", b.block}, {"split_blocks", b.split / b.block}}, arch,
                           f16 ? Dtype::fp16 : Dtype::fp32, strict);
}

// The default decode shape (Llama-3-8B-like, a full 8192-position cache), strict-clean on
// every preset for fp16 and fp32 caches, on the unit attention_on_matrix picks; and a
// short cache at a mid position (error-free). K and V are each read once, up to the
// position: the causal bound reaches the nest as the int Param `position`.
TEST(NpuSchedules, AttentionDecodeIsStrictCleanOnEveryPreset) {
  for (const std::string& name : kPresets) {
    const ArchSpec& arch = preset(name);
    for (const AttentionShape& a : {AttentionShape{8192, 32, 8, 128, 8191}, AttentionShape{1024, 32, 8, 128, 700}}) {
      for (bool f16 : {true, false}) {
        const bool on_matrix = schedules::npu::attention_on_matrix(arch, f16 ? 2 : 4);
        SCOPED_TRACE(name + " S_max=" + std::to_string(a.s_max) + (f16 ? " fp16" : " fp32") +
                     (on_matrix ? " matrix" : " vector"));
        const bool full = a.position + 1 == a.s_max;
        const SimResult s = simulate_decode(arch, f16, a, on_matrix, /*strict=*/full);
        // Mid-cache the causal range's last block is short (its last DMA burst partly
        // wasted, a warning), and the vector path's Σ weight·v has one access Halide
        // cannot prove aligned (an open item); only the default shape is held strict.
        if (full) {
          EXPECT_TRUE(s.violations.empty()) << violations_text(s);
        }
        const int64_t kv_bytes = (a.position + 1) * a.head_dim * a.kv_heads * (f16 ? 2 : 4);
        EXPECT_EQ(tensor_bytes(s.analysis, "k_cache", Direction::in), kv_bytes);
        EXPECT_EQ(tensor_bytes(s.analysis, "v_cache", Direction::in), kv_bytes);
        EXPECT_EQ(s.analysis.matrix.empty(), !on_matrix);
      }
    }
  }
  EXPECT_TRUE(schedules::npu::attention_on_matrix(preset("edge-6tops"), 2));
  EXPECT_FALSE(schedules::npu::attention_on_matrix(preset("gemmini-default"), 2));
  EXPECT_FALSE(schedules::npu::attention_on_matrix(preset("vta-default"), 2));
}

// docs/simulator/validation.md: decode attention over S = 8192, Hq = 32, Hkv = 8, Dh = 128,
// fp16 KV on edge-6tops streams 2 · 8192 · 128 · 8 · 2 B = 33,554,432 B of K and V; at
// 34.1 GB/s that is 984.0 µs. The schedule must be bandwidth bound within 10% of it.
TEST(NpuSchedules, DecodeAttentionIsBandwidthBoundOnEdge) {
  const ArchSpec& edge = preset("edge-6tops");
  const SimResult s = simulate_decode(edge, true, {8192, 32, 8, 128, 8191}, true);
  const double kv_bytes = 2.0 * 8192 * 128 * 8 * 2;
  const double expected_us = kv_bytes / (edge.dram.bandwidth_gbps * 1e3);
  EXPECT_EQ(s.cost.bound, Bound::bandwidth);
  EXPECT_NEAR(s.cost.time_us, expected_us, 0.10 * expected_us);
  EXPECT_FALSE(s.analysis.matrix.empty());
  std::printf("decode attention on edge-6tops: %.1f us (bytes / bandwidth %.1f us, %+.1f%%), %s bound, %lld tiles\n",
              s.cost.time_us, expected_us, 100 * (s.cost.time_us / expected_us - 1), to_string(s.cost.bound),
              static_cast<long long>(s.analysis.tiles));
}

// Prefill through the registration (`npukit sim --op attention --shape T=128,…`): a task
// takes `tokens` query tokens, and each K and V row up to the last position is read once
// per tile of them — T / tokens times, not T times as T decode steps would read it.
TEST(NpuSchedules, PrefillReadsEachKvRowOncePerTileOfTokens) {
  for (const std::string& name : {std::string("edge-6tops"), std::string("gemmini-default")}) {
    SCOPED_TRACE(name);
    const ArchSpec& arch = preset(name);
    SimRequest r;
    r.op = "attention";
    r.shape = {{"T", 64}, {"Hq", 32}, {"Hkv", 8}, {"S_max", 512}, {"Dh", 128}};
    const OpAnalysis a = analyse_op(r, arch);
    const int64_t tokens = a.schedule.at("tokens");
    EXPECT_GT(tokens, 1);
    const int64_t tiles = (64 + tokens - 1) / tokens, kv_bytes = 512 * 128 * 8 * 2;
    EXPECT_EQ(tensor_bytes(a, "k_cache", Direction::in), tiles * kv_bytes);
    EXPECT_EQ(tensor_bytes(a, "v_cache", Direction::in), tiles * kv_bytes);
    EXPECT_EQ(tensor_bytes(a, "o", Direction::out) + tensor_bytes(a, "attention_npu", Direction::out), 64 * 32 * 128 * 2);
    const SimResult s = simulate(a, arch, /*strict=*/true);
    EXPECT_TRUE(s.violations.empty()) << violations_text(s);
  }
}

// A schedule that puts q·kᵀ on gemmini's int8-only array in fp16 gets the rule's error,
// which names the dtype and says to compute it on the vector unit.
TEST(NpuSchedules, Fp16ProductsOnAnInt8OnlyUnitAreARuleError) {
  const ArchSpec& gemmini = preset("gemmini-default");
  const SimResult s = simulate_decode(gemmini, true, {1024, 32, 8, 128, 1023}, /*on_matrix=*/true);
  bool said = false;
  for (const Violation& v : s.violations) {
    if (v.rule == "matrix_dtype" && v.severity == Violation::error) {
      said = true;
      EXPECT_NE(v.message.find("fp16"), std::string::npos) << v.message;
      EXPECT_NE(v.suggestion.find("vector unit"), std::string::npos) << v.suggestion;
    }
  }
  EXPECT_TRUE(said) << violations_text(s);
}

SimResult simulate_quant(const ArchSpec& arch, bool f16, int64_t T, int64_t K, bool strict = false) {
  const schedules::npu::QuantTiles t = schedules::npu::choose_quant_tiles(arch, T, K, f16 ? 2 : 4);
  NpuPipeline p = schedules::npu::per_token_quant_npu_pipeline(arch, f16 ? Halide::Float(16) : Halide::Float(32),
                                                               t.double_buffer);
  // Halide makes Func names unique per process ("per_token_quant_q$1"): take the outputs'.
  const std::string q = p.outputs[0].func, scale = p.outputs[1].func;
  return simulate_pipeline(p, {{"a", {K, T}}, {q, {K, T}}, {scale, {T}}}, {{"tile_rows", t.rows}}, arch,
                           f16 ? Dtype::fp16 : Dtype::fp32, strict);
}

// Prefill (512 tokens of 4096): a read once, q and the scales written once (two outputs,
// one loop). Decode (one token): its one 4-byte scale is a store run shorter than every
// preset's DMA alignment, which their store engines write with byte enables
// (partial_writes), so both shapes are strict-clean on every preset; the prefill's
// per-tile scale runs (4 B per row, a few rows a tile) waste bursts, under 1% of the op's
// bytes, which the cost model charges and the rules let pass.
TEST(NpuSchedules, PerTokenQuantIsStrictCleanWhereStoresHaveByteEnables) {
  for (const std::string& name : kPresets) {
    const ArchSpec& arch = preset(name);
    ASSERT_TRUE(arch.dma_for(DmaDirection::out).partial_writes) << name;
    for (bool f16 : {true, false}) {
      SCOPED_TRACE(name + (f16 ? " fp16" : " fp32"));
      const SimResult s = simulate_quant(arch, f16, 512, 4096, /*strict=*/true);
      EXPECT_TRUE(s.violations.empty()) << violations_text(s);
      EXPECT_EQ(tensor_bytes(s.analysis, "a", Direction::in), 512 * 4096 * (f16 ? 2 : 4));
      EXPECT_EQ(tensor_bytes(s.analysis, "per_token_quant_q", Direction::out), 512 * 4096);  // names shown without $n
      EXPECT_EQ(tensor_bytes(s.analysis, "per_token_quant_scale", Direction::out), 512 * 4);
      const SimResult d = simulate_quant(arch, f16, 1, 4096, /*strict=*/true);
      EXPECT_TRUE(d.violations.empty()) << violations_text(d);
      EXPECT_EQ(tensor_bytes(d.analysis, "per_token_quant_scale", Direction::out), 4);
    }
  }
}

// The same decode step on a store engine without byte enables: the 4-byte scale is a run
// no such engine can issue, and the rules say so with the fix. At prefill its chooser
// keeps every tile's scale run aligned (rows in multiples of alignment / 4), so only the
// decode shape, where T = 1 leaves nothing to choose, is an error.
TEST(NpuSchedules, PerTokenQuantDecodeScaleIsAnErrorWithoutPartialWrites) {
  ArchSpec arch = preset("edge-6tops");
  for (DmaEngine& e : arch.dma) e.partial_writes = false;
  const SimResult d = simulate_quant(arch, true, 1, 4096);
  bool said = false;
  for (const Violation& v : d.violations)
    said = said || (v.rule == "dma_alignment" && v.func == "per_token_quant_scale" && v.severity == Violation::error &&
                    v.message.find("4 B") != std::string::npos);
  EXPECT_TRUE(said) << violations_text(d);
  const schedules::npu::QuantTiles t = schedules::npu::choose_quant_tiles(arch, 512, 4096, 2);
  EXPECT_EQ(t.rows % 8, 0) << t.rows;  // 8 fp32 scales = one 32 B alignment unit
  const SimResult s = simulate_quant(arch, true, 512, 4096);
  EXPECT_EQ(count_errors(s.violations), 0) << violations_text(s);
}


// int4_gemm's default on every preset (none lists int4): the packed weights come from DRAM
// at 0.5 B each (the decode planner's "int4 is memory-only"), the vector unit unpacks each
// group to int8 in the weight operand buffer, and the matrix unit multiplies int8. Decode
// and prefill strict-clean.
TEST(NpuSchedules, Int4GemmIsMemoryOnlyWhereTheMatrixUnitHasNoInt4) {
  for (const std::string& name : kPresets) {
    const ArchSpec& arch = preset(name);
    ASSERT_FALSE(arch.matrix.supports(Dtype::int4)) << name;
    for (int64_t M : {1, 128}) {
      SimRequest r;
      r.op = "int4_gemm";
      r.shape = {{"M", M}, {"K", 4096}, {"N", 4096}, {"G", 128}};
      const SimResult s = simulate(analyse_op(r, arch), arch, /*strict=*/true);
      SCOPED_TRACE(name + " M=" + std::to_string(M));
      EXPECT_TRUE(s.violations.empty()) << violations_text(s);
      ASSERT_FALSE(s.analysis.matrix.empty());
      for (const MatrixWork& m : s.analysis.matrix) EXPECT_EQ(m.dtype, Dtype::int8);  // full and tail tiles
      bool unpacked = false;
      for (const VectorWork& v : s.analysis.vector) unpacked = unpacked || v.func.rfind("w_unpacked", 0) == 0;
      EXPECT_TRUE(unpacked);
      // Each weight byte once per M tile: 0.5 B per weight from DRAM, not int8's 1 B.
      const int64_t w = tensor_bytes(s.analysis, "w", Direction::in);
      EXPECT_EQ(w % (4096 * 2048), 0) << w;
      if (M == 1) {
        EXPECT_EQ(w, 4096 * 2048);
      }
    }
  }
}

// Forced onto the matrix unit (`--param unit=matrix`), a unit without int4 gets the rule's
// error naming the op, the dtype and the unit; where the arch lists int4 (edge-6tops with
// an int4 shape added), the default takes it: the packed bytes go straight to the weight
// operand buffer, nothing is unpacked, and the shapes are strict-clean.
TEST(NpuSchedules, Int4GemmOnTheMatrixUnitNeedsInt4) {
  SimRequest r;
  r.op = "int4_gemm";
  r.params = {{"unit", "matrix"}};
  const ArchSpec& edge = preset("edge-6tops");
  const SimResult forced = simulate(analyse_op(r, edge), edge, false);
  bool said = false;
  for (const Violation& v : forced.violations) {
    if (v.rule != "matrix_dtype") continue;
    said = v.severity == Violation::error && v.op == "int4_gemm" && v.message.find("int4") != std::string::npos &&
           v.message.find("matrix unit of edge-6tops") != std::string::npos;
  }
  EXPECT_TRUE(said) << violations_text(forced);

  ArchSpec int4 = edge;
  int4.name = "edge-6tops-int4";
  int4.matrix.dtypes.push_back(Dtype::int4);
  int4.matrix.shapes[Dtype::int4] = CubeShape{8, 64, 4};  // twice int8's k0: the same bytes a cycle
  for (int64_t M : {1, 128}) {
    SimRequest d;
    d.op = "int4_gemm";
    d.shape = {{"M", M}, {"K", 4096}, {"N", 4096}, {"G", 128}};
    const SimResult s = simulate(analyse_op(d, int4), int4, /*strict=*/true);
    SCOPED_TRACE("M=" + std::to_string(M));
    EXPECT_TRUE(s.violations.empty()) << violations_text(s);
    ASSERT_FALSE(s.analysis.matrix.empty());
    for (const MatrixWork& m : s.analysis.matrix) EXPECT_EQ(m.dtype, Dtype::int4);
    for (const VectorWork& v : s.analysis.vector) EXPECT_NE(v.func.rfind("w_unpacked", 0), 0u) << v.func;
  }
}

}  // namespace
}  // namespace npukit::sim
