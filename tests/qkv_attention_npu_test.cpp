// qkv_attention's composite NPU schedule (schedules/npu/qkv_attention.cpp): the stages per
// dtype, the stage-only pipelines (float linear, copy_rows, dequantize_rows) through the
// rules at the composite's default shapes on every preset, the float linear's unit per
// preset, and the composite's sums and intermediates' traffic (simulate_stages).
#include <gtest/gtest.h>

#include <numeric>

#include "schedules/npu/linear.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/op_simulation.h"
#include "simulator/analysis/stage_simulation.h"
#include "simulator/simulate.h"

namespace npukit::sim {
namespace {

using schedules::npu::NpuStage;
using schedules::npu::NpuStages;

SimRequest request(const std::string& dtype, bool prefill = false) {
  const schedules::npu::NpuSchedule* s = schedules::npu::find_npu_schedule("qkv_attention");
  SimRequest r;
  r.op = "qkv_attention";
  r.dtype = dtype;
  r.shape = prefill ? s->prefill : s->decode;
  return r;
}

std::vector<std::string> labels(const NpuStages& st) {
  std::vector<std::string> v;
  for (const NpuStage& s : st.stages) v.push_back(s.label + "=" + (s.schedule ? s.schedule->op : s.op));
  return v;
}

TEST(QkvAttentionNpu, StagesPerDtype) {
  const ArchSpec& arch = preset("edge-6tops");
  const std::vector<std::string> f16 = {"qkv projection=linear", "rope q=rope",          "rope k=rope",
                                        "k -> k_cache=copy_rows", "v -> v_cache=copy_rows", "q -> float16=copy_rows",
                                        "attention=attention",    "output projection=linear"};
  EXPECT_EQ(labels(request_stages(request("float16"), arch)), f16);
  std::vector<std::string> f32 = f16;
  f32.erase(f32.begin() + 5);  // q is rotated in fp32, the attention's dtype
  EXPECT_EQ(labels(request_stages(request("float32"), arch)), f32);
  const std::vector<std::string> i8 = {"quantize x=per_token_quant",    "qkv projection=int8_gemm",
                                       "dequantize qkv=dequantize_rows", "rope q=rope",
                                       "rope k=rope",                    "k -> k_cache=copy_rows",
                                       "v -> v_cache=copy_rows",         "q -> float16=copy_rows",
                                       "attention=attention",            "quantize o=per_token_quant",
                                       "output projection=int8_gemm",    "dequantize y=dequantize_rows"};
  EXPECT_EQ(labels(request_stages(request("int8"), arch)), i8);
  EXPECT_THROW(request_stages(request("bfloat16"), arch), std::invalid_argument);
}

// The cache rows the write stages address: rows pos ... pos+T−1 of each kv head.
TEST(QkvAttentionNpu, CacheWriteViewsArePosRowsOfEveryHead) {
  SimRequest r = request("float16");
  r.params["pos"] = "100";
  for (const NpuStage& s : request_stages(r, preset("edge-6tops")).stages) {
    if (s.label != "k -> k_cache" && s.label != "v -> v_cache") continue;
    const schedules::npu::NpuView& v = s.tensors.at("dst");
    EXPECT_EQ(v.offset, 100 * 128);
    EXPECT_EQ(v.shape, (std::vector<int64_t>{8, 1, 128}));
    EXPECT_EQ(v.strides, (std::vector<int64_t>{8192 * 128, 128, 1}));
  }
}

// The pipelines that are no registry op of their own: strict-clean at the composite's
// default shapes on every preset, or the matrix_dtype error, except the partial burst
// ascend-910b-like's numbers make unavoidable (docs/simulator/ir-analysis.md): fp16 output
// rows of a whole burst (256 columns) beside K chunks of a whole burst do not fit its
// 64 KiB L0B. (A decode step's cache rows, one 256-byte row per kv head, are declared
// short runs: the cache layout's, not the tiling's.)
// (The registered stages are checked by their own registrations, and the whole composite
// by npu_schedule_registry_test.)
TEST(QkvAttentionNpu, StageOnlyPipelinesAreStrictCleanAtTheDefaults) {
  for (const std::string& name : preset_names()) {
    const ArchSpec& arch = preset(name);
    for (std::string dtype : {"float16", "float32", "int8", "int8_float32"}) {
      for (bool prefill : {false, true}) {
        for (const NpuStage& s : request_stages(request(dtype, prefill), arch).stages) {
          if (!s.schedule) continue;
          const ResolvedRequest rr = resolve_stage(s, arch);
          const SimResult res = simulate(analyse_resolved(rr, rr.knobs, arch), arch, true);
          for (const Violation& v : res.violations) {
            const bool f16_out = s.label == "output projection" && dtype == "float16" && v.value == 128;
            const bool known = name == "ascend-910b-like" && v.rule == "dma_alignment" && f16_out;
            EXPECT_TRUE(v.rule == "matrix_dtype" || known)
                << name << " " << dtype << (prefill ? " prefill " : " decode ") << s.label << ": " << v.func << ": "
                << v.message;
          }
        }
      }
    }
  }
}

// fp16 products on the matrix unit where it has fp16; elsewhere on the vector unit, and a
// linear forced onto an int8-only unit is the matrix_dtype error.
TEST(QkvAttentionNpu, FloatLinearUnitPerPreset) {
  NpuStage st;
  st.label = "linear";
  st.schedule = &schedules::npu::npu_stage_linear();
  st.dtype = "float16";
  st.shape = {{"M", 1}, {"K", 4096}, {"N", 6144}};
  for (const std::string& name : preset_names()) {
    const ArchSpec& arch = preset(name);
    const ResolvedRequest rr = resolve_stage(st, arch);
    const OpAnalysis a = analyse_resolved(rr, rr.knobs, arch);
    const bool matrix = schedules::npu::linear_on_matrix(arch, 2);
    EXPECT_EQ(!a.matrix.empty(), matrix) << name;
    EXPECT_EQ(a.macs(), matrix ? 4096 * 6144 : 0) << name;
    if (!matrix) {
      int64_t elements = 0;
      for (const VectorWork& w : a.vector) elements += w.elements;
      EXPECT_GE(elements, 6144) << name;  // every output computed on the vector unit
    }
  }
  EXPECT_TRUE(schedules::npu::linear_on_matrix(preset("edge-6tops"), 2));
  EXPECT_FALSE(schedules::npu::linear_on_matrix(preset("gemmini-default"), 2));
  st.params = {{"unit", "matrix"}};
  const ArchSpec& gemmini = preset("gemmini-default");
  const ResolvedRequest rr = resolve_stage(st, gemmini);
  bool said = false;
  for (const Violation& v : simulate(analyse_resolved(rr, rr.knobs, gemmini), gemmini, true).violations)
    said = said || (v.rule == "matrix_dtype" && v.severity == Violation::error);
  EXPECT_TRUE(said);
}

// The total is the stages' sum, and each intermediate's traffic is what its producer
// writes and its consumers read: qkv's rows are written once and read once in parts.
TEST(QkvAttentionNpu, TotalsAndIntermediates) {
  for (std::string name : {"edge-6tops", "gemmini-default"}) {
    const ArchSpec& arch = preset(name);
    const StagedResult r = simulate_stages(request("float32"), arch, false);
    int64_t cycles = 0, bytes = 0;
    for (const StageSimulation& s : r.stages) cycles += s.result.cost.total_cycles, bytes += s.result.analysis.dram_bytes();
    EXPECT_EQ(r.total.cost.total_cycles, cycles) << name;
    EXPECT_EQ(r.total.analysis.dram_bytes(), bytes) << name;
    const int64_t qkv_bytes = (32 + 2 * 8) * 128 * 4;  // T = 1, fp32 rows
    bool seen = false;
    for (const IntermediateTraffic& m : r.intermediates) {
      if (m.name != "qkv") continue;
      seen = true;
      EXPECT_EQ(m.bytes, qkv_bytes);
      EXPECT_EQ(m.written, qkv_bytes) << name;
      EXPECT_EQ(m.read, qkv_bytes) << name;
      EXPECT_EQ(m.producer, "qkv projection");
      EXPECT_EQ(m.consumers, (std::vector<std::string>{"rope q", "rope k", "v -> v_cache"}));
    }
    EXPECT_TRUE(seen) << name;
    EXPECT_LE(r.fusable_bytes(), r.intermediate_bytes());
    EXPECT_GT(r.intermediate_bytes(), 0);
  }
}

}  // namespace
}  // namespace npukit::sim
