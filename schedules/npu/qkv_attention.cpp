// The fused attention block `qkv_attention` on the NPU, as a composite schedule: the
// sequence of the per-op NPU schedules it is made of (NpuSchedule::stages), each run and
// analysed as it would be alone, with the intermediates (the projected rows, the rotated
// q and k, o, and for int8 weights the quantized activations and their scales) in DRAM.
//
// Float weights: qkv projection (float linear, fp32 rows) → rope q, rope k → k and v into
// the caches at rows pos ... pos+T−1 (converted to the cache dtype) → [fp16: q to fp16] →
// attention → output projection (float linear). Int8 weights: per_token_quant(x) →
// int8_gemm (int32) → dequantize → the same rope, cache and attention stages →
// per_token_quant(o) → int8_gemm → dequantize into y. The runtime's CPU path
// (runtime/ops/qkv_attention.cpp) computes the same values in the same order.
#include <stdexcept>
#include <string>

#include "schedules/npu/copy_rows.h"
#include "schedules/npu/dequantize_rows.h"
#include "schedules/npu/linear.h"
#include "schedules/npu/npu_schedule.h"

namespace npukit::schedules::npu {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

// The activations' and caches' dtype of a composite dtype.
std::string act_dtype(const std::string& dtype) {
  return dtype == "float16" || dtype == "int8" ? "float16" : "float32";
}

DType dtype_of(const std::string& name) { return name == "float16" ? DType::float16 : DType::float32; }

NpuView dense(const std::string& of) { return NpuView{of, 0, {}, {}}; }

NpuStages qkv_stages(const std::string& dtype, const Shape& shape, const Params& params) {
  const int64_t T = shape.at("T"), D = shape.at("D"), Hq = shape.at("Hq"), Hkv = shape.at("Hkv"),
                Dh = shape.at("Dh"), S = shape.at("S_max");
  if (Hq % Hkv != 0)
    throw std::invalid_argument("qkv_attention: Hq = " + str(Hq) + " is not a multiple of Hkv = " + str(Hkv));
  if (Dh % 2 != 0) throw std::invalid_argument("qkv_attention: Dh = " + str(Dh) + " must be even (RoPE rotates pairs)");
  if (T > S) throw std::invalid_argument("qkv_attention: T = " + str(T) + " exceeds S_max = " + str(S));
  const int64_t QKV = (Hq + 2 * Hkv) * Dh, HqDh = Hq * Dh;
  // Where the new rows go (the npu-sim run's views); the attention stage's analysis takes
  // the positions its own registration gives a shape.
  const int64_t pos = params.integer("pos");
  const bool int8 = dtype == "int8" || dtype == "int8_float32";
  const std::string act = act_dtype(dtype);
  const std::string rope_params_theta = param_text(params.values().at("theta"));
  const std::string style = params.choice("style");
  NpuStages s;
  auto mid = [&](const std::string& name, DType dt, std::vector<int64_t> dims) {
    s.intermediates.push_back(NpuIntermediate{name, dt, std::move(dims), {}});
  };
  auto stage = [&](std::string label, std::string op, const NpuSchedule* sched, std::string dt, Shape sh,
                   std::map<std::string, std::string> ps, std::map<std::string, NpuView> ts) {
    s.stages.push_back(NpuStage{std::move(label), std::move(op), sched, std::move(dt), std::move(sh), std::move(ps),
                                std::move(ts)});
  };
  // The positions pos + t that RoPE and the attention read: the core's scalar unit
  // computes them (no stage makes them; the host fills them in the npu-sim run).
  mid("positions", DType::int32, {T});
  s.intermediates.back().fill = [T](const Call& call, void* data) {
    const int64_t p0 = call.params.integer("pos");
    for (int64_t t = 0; t < T; ++t) static_cast<int32_t*>(data)[t] = static_cast<int32_t>(p0 + t);
  };
  // 1. The QKV projection into fp32 rows [T, QKV] (q, then k, then v per token).
  mid("qkv", DType::float32, {T, QKV});
  if (int8) {
    mid("x_q", DType::int8, {T, D});
    mid("x_scale", DType::float32, {T});
    mid("qkv_acc", DType::int32, {T, QKV});
    stage("quantize x", "per_token_quant", nullptr, act, {{"T", T}, {"K", D}}, {},
          {{"a", dense("x")}, {"q", dense("x_q")}, {"scale", dense("x_scale")}});
    stage("qkv projection", "int8_gemm", nullptr, "int8", {{"M", T}, {"K", D}, {"N", QKV}}, {{"out", "int32"}},
          {{"a", dense("x_q")}, {"w", dense("w_qkv")}, {"y", dense("qkv_acc")}});
    stage("dequantize qkv", "", &npu_stage_dequantize_rows(), "float32", {{"M", T}, {"N", QKV}}, {},
          {{"acc", dense("qkv_acc")}, {"row_scale", dense("x_scale")}, {"chan_scale", dense("w_qkv_scale")},
           {"y", dense("qkv")}});
  } else {
    stage("qkv projection", "", &npu_stage_linear(), act, {{"M", T}, {"K", D}, {"N", QKV}}, {{"out", "float32"}},
          {{"x", dense("x")}, {"w", dense("w_qkv")}, {"y", dense("qkv")}});
  }
  // 2. RoPE on q and k, read in place from the rows (fp32 in, fp32 out).
  const std::map<std::string, std::string> rope = {{"theta", rope_params_theta}, {"style", style}, {"rotary_dim", "0"}};
  const bool qo32 = int8 && act == "float16", q_f16 = act == "float16" && !qo32;
  mid("q_rot", DType::float32, {T, Hq, Dh});
  mid("k_rot", DType::float32, {T, Hkv, Dh});
  stage("rope q", "rope", nullptr, "float32", {{"tokens", T}, {"heads", Hq}, {"head_dim", Dh}}, rope,
        {{"x", NpuView{"qkv", 0, {T, Hq, Dh}, {QKV, Dh, 1}}}, {"positions", dense("positions")},
         {"y", dense("q_rot")}});
  stage("rope k", "rope", nullptr, "float32", {{"tokens", T}, {"heads", Hkv}, {"head_dim", Dh}}, rope,
        {{"x", NpuView{"qkv", HqDh, {T, Hkv, Dh}, {QKV, Dh, 1}}}, {"positions", dense("positions")},
         {"y", dense("k_rot")}});
  // 3. The cache write: rows pos ... pos+T−1 of every kv head, in the cache's dtype.
  const NpuView k_rows{"k_cache", pos * Dh, {Hkv, T, Dh}, {S * Dh, Dh, 1}};
  const NpuView v_rows{"v_cache", pos * Dh, {Hkv, T, Dh}, {S * Dh, Dh, 1}};
  const Shape rows{{"a", T}, {"b", Hkv}, {"row", Dh}};
  stage("k -> k_cache", "", &npu_stage_copy_rows(), "float32", rows, {{"out", act}},
        {{"src", dense("k_rot")}, {"dst", k_rows}});
  stage("v -> v_cache", "", &npu_stage_copy_rows(), "float32", rows, {{"out", act}},
        {{"src", NpuView{"qkv", HqDh + Hkv * Dh, {T, Hkv, Dh}, {QKV, Dh, 1}}}, {"dst", v_rows}});
  // 4. The attention core over the updated caches; its q and o are in the caches' dtype,
  // but for int8 weights they stay fp32 (as on the CPU): either rounded to fp16 flips int8
  // steps of o's per-token quantization (y nmse ~1e-5 against the op's 1e-6).
  std::string q_for_attention = "q_rot";
  if (q_f16) {
    mid("q", DType::float16, {T, Hq, Dh});
    // As [T·Hq, 1, Dh] rows into [1, T·Hq, Dh]: the same memory, one run per tile.
    stage("q -> float16", "", &npu_stage_copy_rows(), "float32", {{"a", T * Hq}, {"b", 1}, {"row", Dh}},
          {{"out", "float16"}},
          {{"src", NpuView{"q_rot", 0, {T * Hq, 1, Dh}, {}}}, {"dst", NpuView{"q", 0, {1, T * Hq, Dh}, {}}}});
    q_for_attention = "q";
  }
  mid("o", qo32 ? DType::float32 : dtype_of(act), {T, Hq, Dh});
  stage("attention", "attention", nullptr, act, {{"T", T}, {"Hq", Hq}, {"Hkv", Hkv}, {"Dh", Dh}, {"S_max", S}},
        {{"qo_float32", qo32 ? "1" : "0"}},
        {{"q", dense(q_for_attention)}, {"k_cache", dense("k_cache")}, {"v_cache", dense("v_cache")},
         {"positions", dense("positions")}, {"mask", dense("mask")}, {"o", dense("o")}});
  // 5. The output projection, o read as [T, Hq·Dh].
  const NpuView o_rows{"o", 0, {T, HqDh}, {}};
  if (int8) {
    mid("o_q", DType::int8, {T, HqDh});
    mid("o_scale", DType::float32, {T});
    mid("y_acc", DType::int32, {T, D});
    stage("quantize o", "per_token_quant", nullptr, qo32 ? "float32" : act, {{"T", T}, {"K", HqDh}}, {},
          {{"a", o_rows}, {"q", dense("o_q")}, {"scale", dense("o_scale")}});
    stage("output projection", "int8_gemm", nullptr, "int8", {{"M", T}, {"K", HqDh}, {"N", D}}, {{"out", "int32"}},
          {{"a", dense("o_q")}, {"w", dense("w_o")}, {"y", dense("y_acc")}});
    stage("dequantize y", "", &npu_stage_dequantize_rows(), act, {{"M", T}, {"N", D}}, {},
          {{"acc", dense("y_acc")}, {"row_scale", dense("o_scale")}, {"chan_scale", dense("w_o_scale")},
           {"y", dense("y")}});
  } else {
    stage("output projection", "", &npu_stage_linear(), act, {{"M", T}, {"K", HqDh}, {"N", D}}, {{"out", "same"}},
          {{"x", o_rows}, {"w", dense("w_o")}, {"y", dense("y")}});
  }
  return s;
}

}  // namespace

// Dtypes: "float16" and "float32" (x, weights and caches of that dtype), "int8" (int8
// weights, fp16 x and caches) and "int8_float32" (int8 weights, fp32 x and caches).
// Shape T, D, Hq, Hkv, Dh, S_max.
const NpuSchedule& npu_schedule_qkv_attention() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "qkv_attention";
    s.shape = {"T", "D", "Hq", "Hkv", "Dh", "S_max"};
    s.dtypes = {"float16", "float32", "int8", "int8_float32"};
    // Llama-3-8B-like: D 4096, 32 query heads, 8 kv heads of 128; decode over an 8192-position
    // cache, prefill a 128-token chunk of a 1024-position cache (the attention stage's own
    // defaults: the analysis walks every tile).
    s.decode = {{"T", 1}, {"D", 4096}, {"Hq", 32}, {"Hkv", 8}, {"Dh", 128}, {"S_max", 8192}};
    s.prefill = {{"T", 128}, {"D", 4096}, {"Hq", 32}, {"Hkv", 8}, {"Dh", 128}, {"S_max", 1024}};
    s.stages = qkv_stages;
    s.call_shape = [](const Call& call) {
      const int64_t dh = call.dim("Dh");
      return Shape{{"T", call.dim("T")}, {"D", call.dim("D")}, {"Hq", call.dim("HqDh") / dh},
                   {"Hkv", call.dim("Hkv")}, {"Dh", dh}, {"S_max", call.dim("S_max")}};
    };
    s.call_dtype = [](const Call& call) {
      const DType x = call.tensor("x").dtype, w = call.tensor("w_qkv").dtype;
      if (w == DType::int8) return std::string(x == DType::float16 ? "int8" : "int8_float32");
      if (w != x)
        return std::string("x ") + std::string(dtype_name(x)) + " with " + std::string(dtype_name(w)) + " weights";
      return std::string(dtype_name(x));
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
