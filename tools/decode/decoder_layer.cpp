#include "tools/decode/decoder_layer.h"

#include <stdexcept>

#include "schedules/npu/dequantize_rows.h"
#include "schedules/npu/linear.h"
#include "simulator/analysis/stage_simulation.h"

namespace npukit::decode {

using schedules::npu::NpuStage;

const char* to_string(WeightType w) { return w == WeightType::fp16 ? "fp16" : w == WeightType::int8 ? "int8" : "int4"; }
const char* to_string(KvType k) { return k == KvType::fp16 ? "fp16" : "int8"; }

namespace {

// int4's fp16 scales: one per group of kInt4Group along K, per output channel.
int64_t int4_scale_bytes(int64_t K, int64_t N) { return (K + kInt4Group - 1) / kInt4Group * N * 2; }

}  // namespace

int64_t weight_matrix_bytes(int64_t K, int64_t N, WeightType w) {
  switch (w) {
    case WeightType::fp16: return K * N * 2;
    case WeightType::int8: return K * N + N * 4;
    case WeightType::int4: return (K + 1) / 2 * N + int4_scale_bytes(K, N);
  }
  return 0;
}

namespace {

NpuStage stage(std::string label, std::string op, std::string dtype, schedules::npu::Shape shape,
               std::map<std::string, std::string> params = {}) {
  NpuStage s;
  s.label = std::move(label);
  s.op = std::move(op);
  s.dtype = std::move(dtype);
  s.shape = std::move(shape);
  s.params = std::move(params);
  return s;
}

PlanItem plain(const std::string& group, NpuStage s) {
  PlanItem it;
  it.group = group;
  it.stage = std::move(s);
  return it;
}

bool is_gemm(const NpuStage& s) { return s.op == "int8_gemm" || s.schedule == &schedules::npu::npu_stage_linear(); }

// A weight GEMM's item. int4 weights run as the int4_gemm op's own NPU schedule at the same
// M, K, N and G = kInt4Group: the packed bytes (0.5 B a weight) and the group scales come
// by DMA, and where the matrix unit has no int4 (every preset) the vector unit unpacks each
// group to int8 before it, which the simulation counts; the scales and the row's
// activation scale are applied in the same stage, so no dequantization stage follows.
PlanItem gemm_item(std::string group, NpuStage s, int64_t count, WeightType w) {
  PlanItem it;
  it.group = std::move(group);
  const int64_t M = s.shape.at("M"), K = s.shape.at("K"), N = s.shape.at("N");
  it.resident_bytes = weight_matrix_bytes(K, N, w);
  if (w == WeightType::int4) {
    s = stage(s.label, "int4_gemm", "int8", {{"M", M}, {"K", K}, {"N", N}, {"G", kInt4Group}}, {{"out", "float16"}});
    it.note = "int4 weights: int4_gemm's schedule (unpacked to int8 on chip where the matrix unit lacks int4)";
  }
  it.stage = std::move(s);
  it.count = count;
  return it;
}

bool is_dequantization(const NpuStage& s) { return s.schedule == &schedules::npu::npu_stage_dequantize_rows(); }

// A GEMM in the weights' dtype: for int8/int4 the activations' per-token quantization,
// int8_gemm and a dequantization to fp16; for fp16 the fp16 linear stage.
void add_gemm(std::vector<PlanItem>& out, const std::string& group, const std::string& label, int64_t M, int64_t K,
              int64_t N, WeightType w) {
  if (w == WeightType::fp16) {
    NpuStage s = stage(label, "", "float16", {{"M", M}, {"K", K}, {"N", N}}, {{"out", "same"}});
    s.schedule = &schedules::npu::npu_stage_linear();
    out.push_back(gemm_item(group, s, 1, w));
    return;
  }
  // As qkv_attention's own int8 stages do it: int32 accumulators, then a dequantization
  // stage to fp16. (int8_gemm's fused out=float16 would save the accumulators' DRAM round
  // trip, but its chooser overflows ascend-910b-like's 64 KiB L0B even at K = N = 4096.)
  PlanItem q;
  q.group = group;
  q.stage = stage("quantize " + label, "per_token_quant", "float16", {{"T", M}, {"K", K}});
  out.push_back(q);
  out.push_back(gemm_item(group, stage(label, "int8_gemm", "int8", {{"M", M}, {"K", K}, {"N", N}}, {{"out", "int32"}}),
                          1, w));
  if (w == WeightType::int4) return;  // int4_gemm scales its own sums
  NpuStage dq = stage("dequantize " + label, "", "float16", {{"M", M}, {"N", N}});
  dq.schedule = &schedules::npu::npu_stage_dequantize_rows();
  out.push_back(plain(group, dq));
}


}  // namespace

std::vector<PlanItem> decoder_layer(const ModelConfig& m, WeightType w, const PassShape& p, const sim::ArchSpec& arch) {
  const int64_t M = p.tokens * p.seqs, D = m.hidden, F = m.intermediate;
  std::vector<PlanItem> out;
  // The input norm adds the previous layer's residual (the first layer's is a plain
  // rms_norm: one layer in dozens, not modelled apart).
  out.push_back(plain("norm", stage("input norm", "add_rms_norm", "float16", {{"rows", M}, {"hidden", D}})));
  // The attention block: qkv_attention's stages for all M rows (projections, RoPE, cache
  // writes), its attention core once per sequence over that sequence's cache.
  sim::SimRequest r;
  r.op = "qkv_attention";
  r.dtype = w == WeightType::fp16 ? "float16" : "int8";
  r.shape = {{"T", M}, {"D", D}, {"Hq", m.heads}, {"Hkv", m.kv_heads}, {"Dh", m.head_dim},
             {"S_max", std::max(M, p.context)}};
  for (NpuStage& s : sim::request_stages(r, arch).stages) {
    if (s.op == "attention") {
      s.shape["T"] = p.tokens;
      s.shape["S_max"] = p.context;
      PlanItem it = plain("attention", s);
      it.count = p.seqs;
      // The caches the core reads (fp16, the schedule's dtype; --kv int8 is memory-only).
      it.resident_bytes = 2 * m.kv_heads * p.context * m.head_dim * 2;
      if (p.seqs > 1) it.note = "once per sequence, over its own cache";
      out.push_back(std::move(it));
    } else if (is_gemm(s)) {
      out.push_back(gemm_item("attention", s, 1, w));
    } else if (w == WeightType::int4 && is_dequantization(s)) {
      continue;  // int4_gemm's output is dequantized already
    } else {
      out.push_back(plain("attention", s));
    }
  }
  out.push_back(plain("norm", stage("post-attention norm", "add_rms_norm", "float16", {{"rows", M}, {"hidden", D}})));
  // The MLP: gate and up as one GEMM of 2F outputs (one pass over the activations), the
  // SiLU gate, the down projection.
  add_gemm(out, "mlp", "gate+up projection", M, D, 2 * F, w);
  out.push_back(plain("mlp", stage("silu_mul", "silu_mul", "float16", {{"tokens", M}, {"ffn", F}})));
  add_gemm(out, "mlp", "down projection", M, F, D, w);
  return out;
}

std::vector<PlanItem> model_head(const ModelConfig& m, WeightType w, int64_t rows) {
  std::vector<PlanItem> out;
  out.push_back(plain("head", stage("final norm", "rms_norm", "float16", {{"rows", rows}, {"hidden", m.hidden}})));
  add_gemm(out, "head", "lm head", rows, m.hidden, m.vocab, w);
  for (PlanItem& it : out) it.group = "head";
  return out;
}

}  // namespace npukit::decode
