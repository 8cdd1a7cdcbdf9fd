// The registry entry of the fused attention block of one layer (op `qkv_attention`): QKV
// projection with RoPE and the cache write, the attention core, the output projection.
// Three kernel calls; the intermediates (q, o: T·Hq·Dh fp32 each) stay in cache. With int8
// weights, each projection is a per-token quantization, the INT8 GEMM accumulation and a
// dequantization (fused into the RoPE and cache-write step for the QKV projection).
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/attention_decode_f32.h"
#include "kernels/attention_decode_f32_gpu.h"
#include "kernels/attention_decode_f32_kv_f16.h"
#include "kernels/attention_decode_f32_kv_f16_gpu.h"
#include "kernels/attention_decode_f32_kv_f16_unmasked.h"
#include "kernels/attention_decode_f32_kv_f16_unmasked_gpu.h"
#include "kernels/attention_decode_f32_unmasked.h"
#include "kernels/attention_decode_f32_unmasked_gpu.h"
#include "kernels/attention_f32_gpu.h"
#include "kernels/attention_f32_kv_f16_gpu.h"
#include "kernels/dequantize_rows_f16.h"
#include "kernels/dequantize_rows_f16_gpu.h"
#include "kernels/dequantize_rows_f32.h"
#include "kernels/dequantize_rows_f32_gpu.h"
#include "kernels/linear_f32_wf16_f16.h"
#include "kernels/linear_f32_wf16_f16_gpu.h"
#include "kernels/linear_f32_wf16_f32.h"
#include "kernels/linear_f32_wf16_f32_gpu.h"
#include "kernels/linear_f32_wf32_f16.h"
#include "kernels/linear_f32_wf32_f16_gpu.h"
#include "kernels/linear_f32_wf32_f32.h"
#include "kernels/linear_f32_wf32_f32_gpu.h"
#include "kernels/quantize_rows_f16.h"
#include "kernels/quantize_rows_f16_gpu.h"
#include "kernels/quantize_rows_f32.h"
#include "kernels/quantize_rows_f32_gpu.h"
#include "kernels/qkv_rope_dequant_f16.h"
#include "kernels/qkv_rope_dequant_f16_gpu.h"
#include "kernels/qkv_rope_dequant_f32.h"
#include "kernels/qkv_rope_dequant_f32_gpu.h"
#include "kernels/qkv_rope_f16_wf16.h"
#include "kernels/qkv_rope_f16_wf16_gpu.h"
#include "kernels/qkv_rope_f16_wf32.h"
#include "kernels/qkv_rope_f16_wf32_gpu.h"
#include "kernels/qkv_rope_f32_wf16.h"
#include "kernels/qkv_rope_f32_wf16_gpu.h"
#include "kernels/qkv_rope_f32_wf32.h"
#include "kernels/qkv_rope_f32_wf32_gpu.h"
#include "runtime/error.h"
#include "runtime/gpu_device.h"
#include "runtime/gpu_memory.h"
#include "runtime/halide_call.h"
#include "runtime/kernel_call.h"
#include "runtime/ops/split_attention.h"
#include "runtime/ops/weight_streams.h"
#include "runtime/int8_gemm.h"
#include "runtime/qkv_attention_int8.h"
#include "runtime/registry.h"
#include "runtime/scratch_arena.h"

namespace npukit {
namespace {

// The head counts and head_dim, from the parameters where given (nonzero), else from the
// tensors' shapes; check() makes the two agree.
struct Heads {
  int64_t hq, hkv, dh;
};

Heads heads_of(const Call& call) {
  const int64_t dh = call.params.integer("head_dim") ? call.params.integer("head_dim") : call.dim("Dh");
  const int64_t hkv = call.params.integer("kv_heads") ? call.params.integer("kv_heads") : call.dim("Hkv");
  const int64_t hq = call.params.integer("heads") ? call.params.integer("heads") : call.dim("HqDh") / dh;
  return {hq, hkv, dh};
}

bool int8_weights(const Call& call) { return call.tensor("w_qkv").dtype == DType::int8; }

// Int8 weights come with finite positive per-channel scales, float weights with none, and
// the int32 accumulation must be exact over D (QKV projection) and Hq·Dh (output).
void check_weights(const Call& call, const Heads& h) {
  const bool int8 = int8_weights(call);
  const std::string wdt(dtype_name(call.tensor("w_qkv").dtype));
  for (const char* weight : {"w_qkv", "w_o"}) {
    const std::string scale = std::string(weight) + "_scale";
    const auto it = find_name(call.tensors, scale);
    if (!int8 && it != call.tensors.end()) {
      fail(Errc::invalid_argument,
           "qkv_attention: input {} is given but {} is {}: per-channel scales apply to int8 weights only; leave {} out",
           scale, weight, wdt, scale);
    }
    if (!int8) continue;
    if (it == call.tensors.end()) {
      fail(Errc::invalid_argument,
           "qkv_attention: {} is int8 but input {} is missing: int8 weights need their per-output-channel scales "
           "(float32 [{}], real weight = scale[n] * w[n, k])",
           weight, scale, call.tensor(weight).shape.at(0));
    }
    const auto* v = static_cast<const float*>(it->second.data);
    for (int64_t n = 0; n < it->second.numel(); ++n) {
      if (!(std::isfinite(v[n]) && v[n] > 0)) {
        fail(Errc::invalid_argument, "qkv_attention: {}[{}] = {}: every scale of int8 weights must be finite and > 0",
             scale, n, param_text(double(v[n])));
      }
    }
  }
  if (!int8) return;
  const int64_t limit = int8_k_limit(0);
  const std::pair<const char*, int64_t> sums[] = {{"D (x's columns, the QKV projection's K)", call.dim("D")},
                                                  {"heads * head_dim (w_o's columns, the output projection's K)",
                                                   h.hq * h.dh}};
  for (const auto& [what, k] : sums) {
    if (k > limit) {
      fail(Errc::invalid_argument,
           "qkv_attention: {} = {} exceeds {}, the largest K whose int32 accumulation of int8 activations and weights "
           "cannot overflow (int8 weights); use float weights for such a layer",
           what, k, limit);
    }
  }
}

void check(const Call& call) {
  const int64_t T = call.dim("T"), s_max = call.dim("S_max"), pos = call.params.integer("pos");
  const Heads h = heads_of(call);
  if (h.dh != call.dim("Dh")) {
    fail(Errc::invalid_argument,
         "qkv_attention: head_dim = {} but k_cache has Dh = {} (its last dimension); they must be equal", h.dh,
         call.dim("Dh"));
  }
  if (h.dh % 2 != 0) {
    fail(Errc::invalid_argument, "qkv_attention: head_dim = {} must be even (RoPE rotates pairs)", h.dh);
  }
  if (h.hkv != call.dim("Hkv")) {
    fail(Errc::invalid_argument,
         "qkv_attention: kv_heads = {} but k_cache has Hkv = {} heads (its first dimension); they must be equal", h.hkv,
         call.dim("Hkv"));
  }
  if (h.hq * h.dh != call.dim("HqDh")) {
    fail(Errc::invalid_argument,
         "qkv_attention: w_o has {} columns but heads * head_dim = {} * {} = {} (w_o is [D, heads * head_dim])",
         call.dim("HqDh"), h.hq, h.dh, h.hq * h.dh);
  }
  if (h.hq % h.hkv != 0) {
    fail(Errc::invalid_argument,
         "qkv_attention: heads = {} is not a multiple of kv_heads = {} (query head h reads kv head h / (heads / "
         "kv_heads))",
         h.hq, h.hkv);
  }
  const int64_t rows = (h.hq + 2 * h.hkv) * h.dh;
  if (call.dim("QKV") != rows) {
    fail(Errc::invalid_argument,
         "qkv_attention: w_qkv has {} rows but (heads + 2 * kv_heads) * head_dim = ({} + 2 * {}) * {} = {}",
         call.dim("QKV"), h.hq, h.hkv, h.dh, rows);
  }
  if (pos + T > s_max) {
    fail(Errc::invalid_argument,
         "qkv_attention: pos = {} with T = {} new tokens writes cache positions up to {}, but the cache holds S_max = "
         "{} "
         "positions (pos + T must be <= S_max; the cache never grows)",
         pos, T, pos + T - 1, s_max);
  }
  check_weights(call, h);
  if (auto it = find_name(call.tensors, "mask"); it != call.tensors.end()) {
    const auto* m = static_cast<const float*>(it->second.data);
    for (int64_t i = 0; i < it->second.numel(); ++i) {
      if (std::isnan(m[i]) || m[i] == std::numeric_limits<float>::infinity()) {
        fail(Errc::invalid_argument, "qkv_attention: mask[{}, {}] = {}: mask values must be 0, -inf or finite biases",
             i / s_max, i % s_max, std::isnan(m[i]) ? "nan" : "inf");
      }
    }
  }
}

// The rows pos ... pos+T−1 of every kv head of a cache, as a strided [Hkv, T, Dh] view (of
// host or CUDA memory, whose addresses both take an offset).
TensorView new_rows(const TensorView& cache, int64_t pos, int64_t T) {
  if (cache.memory == TensorView::Memory::opencl) fail(Errc::internal, "qkv_attention: a cache in an OpenCL buffer");
  const int64_t s_max = cache.shape[1], dh = cache.shape[2];
  char* base = static_cast<char*>(cache.data) + pos * dh * static_cast<int64_t>(dtype_size(cache.dtype));
  return TensorView{base, cache.dtype, {cache.shape[0], T, dh}, {s_max * dh, dh, 1}, cache.memory};
}

// The first elements of contiguous scratch `v` as a tensor of `shape` (one buffer serves
// both projections).
TensorView as_shape(TensorView v, const Dims& shape) {
  v.shape = shape;
  return v;
}

template <class Kernel>
const Kernel& pick(bool act_f16, bool w_f16, const Kernel& a32w32, const Kernel& a32w16, const Kernel& a16w32,
                   const Kernel& a16w16) {
  return act_f16 ? (w_f16 ? a16w16 : a16w32) : (w_f16 ? a32w16 : a32w32);
}

// T > 1 on a GPU: the general kernel, one launch for all tokens.
void attend_tokens_gpu(const Call& call, const TensorView& q, const TensorView& o) {
  const int64_t T = call.dim("T"), s_max = call.dim("S_max"), pos = call.params.integer("pos");
  const TensorView &k_cache = call.tensor("k_cache"), &v_cache = call.tensor("v_cache");
  const In k{k_cache}, v{v_cache};
  const auto it = find_name(call.tensors, "mask");
  ScratchFrame frame(call);
  RunScratch scratch(call, frame);
  int32_t* positions = frame.take<int32_t>(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t) positions[t] = static_cast<int32_t>(pos + t);
  // Without a mask, one row of zeros every token repeats (moved to the GPU once).
  const In qb{q}, m{it != call.tensors.end() ? it->second : scratch.zero_rows(T, s_max)};
  const In p{{positions, DType::int32, {T}, {}}};
  const Out ob{o};
  if (k_cache.dtype == DType::float16) {
    call_kernel(kernels::attention_f32_kv_f16_gpu, call, qb, k, v, p, m, ob);
  } else {
    call_kernel(kernels::attention_f32_gpu, call, qb, k, v, p, m, ob);
  }
}

// Step 2 of both paths: the attention core over the updated caches, query t at position
// pos + t, from q ([T, Hq, Dh] fp32, rotated) into o. The split kernel (tasks over cache
// splits and kv heads, each k and v row read once for the group's query heads), as the
// attention op takes it: for one token, and on a CPU for every token in turn
// (runtime/ops/split_attention.h). A GPU runs the general kernel for T > 1.
template <bool Gpu>
void attend(const Call& call, const TensorView& q, const TensorView& o) {
  const int64_t T = call.dim("T"), pos = call.params.integer("pos");
  const TensorView &k_cache = call.tensor("k_cache"), &v_cache = call.tensor("v_cache");
  const bool kv_f16 = k_cache.dtype == DType::float16;
  if (!Gpu || T == 1) {
    const auto it = find_name(call.tensors, "mask");
    const TensorView* mask = it != call.tensors.end() ? &it->second : nullptr;
    auto position_of = [pos](int64_t t) { return static_cast<int32_t>(pos + t); };
    if (kv_f16) {
      attend_token_by_token(NPUKIT_TABLE(Gpu, attention_decode_f32_kv_f16),
                            NPUKIT_TABLE(Gpu, attention_decode_f32_kv_f16_unmasked), call, q, k_cache, v_cache, mask,
                            position_of, o);
    } else {
      attend_token_by_token(NPUKIT_TABLE(Gpu, attention_decode_f32), NPUKIT_TABLE(Gpu, attention_decode_f32_unmasked),
                            call, q, k_cache, v_cache, mask, position_of, o);
    }
    return;
  }
  if constexpr (Gpu) attend_tokens_gpu(call, q, o);
}

// The int8 weights a run reads: a prepared op's packed constants with the call's scales, or
// a QkvInt8Weights packed for the call.
struct Int8Operands {
  const layouts::PackedInt8Weights *w_qkv, *w_o;
  const float *w_qkv_scale, *w_o_scale;
  int64_t qkv_scales, o_scales;
};

// The int8-weight path (qkv_attention_int8 below) on the CPU tiers or the GPU variants.
template <bool Gpu>
void qkv_int8_run(const Call& call, const Int8Operands& w);

// A prepared op's packed copy of int8 weight `name`, else the call's tensor packed now.
layouts::PackedInt8Weights packed_or_pack(const Call& call, const char* name);

template <bool Gpu>
void qkv_attention_run(const Call& call) {
  if (int8_weights(call)) {
    // A prepared op's packed constants are read where they are (on a GPU: their device
    // copies, which int8_gpu_weights finds only for the constants themselves); a weight that
    // is no constant is packed here.
    layouts::PackedInt8Weights own_q, own_o;
    const auto* pq = call.packed_constant<layouts::PackedInt8Weights>("w_qkv");
    const auto* po = call.packed_constant<layouts::PackedInt8Weights>("w_o");
    if (pq == nullptr) pq = &(own_q = packed_or_pack(call, "w_qkv"));
    if (po == nullptr) po = &(own_o = packed_or_pack(call, "w_o"));
    const TensorView &sq = call.tensor("w_qkv_scale"), &so = call.tensor("w_o_scale");
    qkv_int8_run<Gpu>(call, {pq, po, static_cast<const float*>(sq.data), static_cast<const float*>(so.data),
                             sq.numel(), so.numel()});
    return;
  }
  const int64_t T = call.dim("T"), pos = call.params.integer("pos");
  const Heads h = heads_of(call);
  const TensorView &k_cache = call.tensor("k_cache"), &v_cache = call.tensor("v_cache");
  const bool act_f16 = call.tensor("x").dtype == DType::float16;
  const bool w_f16 = call.tensor("w_qkv").dtype == DType::float16;
  const bool row_streams = !Gpu && one_token_row_streams(cpu_features());

  // 1. q (rotated) into scratch; rotated k and v straight into the caches.
  ScratchFrame frame(call);
  RunScratch scratch(call, frame);
  const TensorView q = scratch.take(DType::float32, {T, h.hq, h.dh}), o = scratch.take(DType::float32, {T, h.hq, h.dh});
  call_kernel(pick(act_f16, w_f16, NPUKIT_TABLE(Gpu, qkv_rope_f32_wf32), NPUKIT_TABLE(Gpu, qkv_rope_f32_wf16),
                   NPUKIT_TABLE(Gpu, qkv_rope_f16_wf32), NPUKIT_TABLE(Gpu, qkv_rope_f16_wf16)),
              call, In{call.tensor("x")}, In{call.tensor("w_qkv")}, static_cast<int32_t>(h.hq),
              static_cast<int32_t>(h.dh), static_cast<int32_t>(h.hkv), static_cast<int32_t>(pos),
              call.params.real("theta"), call.params.choice("style") == "interleaved", row_streams, Out{q},
              Out{new_rows(k_cache, pos, T)}, Out{new_rows(v_cache, pos, T)});
  // 2. The attention core over the updated caches, query t at position pos + t.
  attend<Gpu>(call, q, o);
  // 3. y = o · w_oᵀ, o read head-major as [T, Hq·Dh].
  call_kernel(pick(act_f16, w_f16, NPUKIT_TABLE(Gpu, linear_f32_wf32_f32), NPUKIT_TABLE(Gpu, linear_f32_wf16_f32),
                   NPUKIT_TABLE(Gpu, linear_f32_wf32_f16), NPUKIT_TABLE(Gpu, linear_f32_wf16_f16)),
              call, In{as_shape(o, {T, h.hq * h.dh})}, In{call.tensor("w_o")}, row_streams, Out{call.tensor("y")});
}

// rows[T, K] (x, or the fp32 o) quantized per token into q[T, K] and scale[T].
template <bool Gpu>
void quantize_rows(const Call& call, const TensorView& rows, const TensorView& q, const TensorView& scale) {
  const Out qb{q}, sb{scale};
  if (rows.dtype == DType::float16) {
    call_kernel(NPUKIT_TABLE(Gpu, quantize_rows_f16), call, In{rows}, qb, sb);
  } else {
    call_kernel(NPUKIT_TABLE(Gpu, quantize_rows_f32), call, In{rows}, qb, sb);
  }
}


}  // namespace

namespace {

// A prepared op's packed copy of int8 weight `name` (a copy of its handle and channel sums,
// not of the weights), else the call's tensor packed now.
layouts::PackedInt8Weights packed_or_pack(const Call& call, const char* name) {
  if (const auto* p = call.packed_constant<layouts::PackedInt8Weights>(name)) return *p;
  const TensorView& t = call.tensor(name);
  std::vector<int8_t> host;
  const auto* w = static_cast<const int8_t*>(t.data);
  if (t.memory == TensorView::Memory::cuda) {  // packed on the host: a prepared op's constant avoids this copy
    host.resize(static_cast<size_t>(t.numel()));
    cuda_copy_to_host(host.data(), t.data, host.size(), "qkv_attention", name);
    w = host.data();
  }
  return layouts::pack_int8_weights(w, t.shape.at(0), t.shape.at(1));
}

}  // namespace

QkvInt8Weights pack_qkv_int8_weights(const Call& call) {
  const TensorView &wq = call.tensor("w_qkv"), &wo = call.tensor("w_o");
  if (wq.dtype != DType::int8 || wo.dtype != DType::int8) {
    fail(Errc::invalid_argument, "qkv_attention: pack_qkv_int8_weights needs int8 w_qkv and w_o");
  }
  QkvInt8Weights w;
  w.w_qkv = packed_or_pack(call, "w_qkv");
  w.w_o = packed_or_pack(call, "w_o");
  const TensorView &sq = call.tensor("w_qkv_scale"), &so = call.tensor("w_o_scale");
  const auto* sqp = static_cast<const float*>(sq.data);
  const auto* sop = static_cast<const float*>(so.data);
  w.w_qkv_scale.assign(sqp, sqp + sq.numel());
  w.w_o_scale.assign(sop, sop + so.numel());
  return w;
}

void qkv_attention_int8(const Call& call, const QkvInt8Weights& w) {
  const Int8Operands o{&w.w_qkv, &w.w_o, w.w_qkv_scale.data(), w.w_o_scale.data(),
                       static_cast<int64_t>(w.w_qkv_scale.size()), static_cast<int64_t>(w.w_o_scale.size())};
  if (is_gpu_family(call.target)) {
    qkv_int8_run<true>(call, o);
  } else {
    qkv_int8_run<false>(call, o);
  }
}

namespace {

template <bool Gpu>
void qkv_int8_run(const Call& call, const Int8Operands& w) {
  const int64_t T = call.dim("T"), D = call.dim("D"), pos = call.params.integer("pos");
  const Heads h = heads_of(call);
  const int64_t rows = (h.hq + 2 * h.hkv) * h.dh, hqdh = h.hq * h.dh;
  if (w.w_qkv->n != rows || w.w_qkv->k != D || w.w_o->n != D || w.w_o->k != hqdh || w.qkv_scales != rows ||
      w.o_scales != D) {
    fail(Errc::invalid_argument,
         "qkv_attention: packed weights of [{}, {}] and [{}, {}] do not fit the call's [{}, {}] and [{}, {}]",
         w.w_qkv->n, w.w_qkv->k, w.w_o->n, w.w_o->k, rows, D, D, hqdh);
  }
  const TensorView &k_cache = call.tensor("k_cache"), &v_cache = call.tensor("v_cache");
  const bool act_f16 = call.tensor("x").dtype == DType::float16;
  ScratchFrame frame(call);
  RunScratch scratch(call, frame);
  const TensorView aq = scratch.take(DType::int8, {T, std::max(D, hqdh)}), a_scale = scratch.take(DType::float32, {T});
  const TensorView q = scratch.take(DType::float32, {T, h.hq, h.dh}), o = scratch.take(DType::float32, {T, h.hq, h.dh});
  const TensorView acc = scratch.take(DType::int32, {T, std::max(rows, D)});
  // On a GPU a prepared op's packed weights are read from their device copies.
  auto accumulate = [&](const TensorView& a, const char* name, const layouts::PackedInt8Weights& pw,
                        const TensorView& out) {
    if constexpr (Gpu) {
      int8_gemm_accumulate_gpu(a, int8_gpu_weights(call, name, pw), 0, out, call.target);
    } else {
      int8_gemm_accumulate(a, pw, 0, out, call.tier, call.target, &frame);
    }
  };

  // 1. x per token → int8; acc = x_q · w_qkvᵀ; dequantized, rotated, k and v into the caches.
  {
    const TensorView xq = as_shape(aq, {T, D}), acc_view = as_shape(acc, {T, rows});
    quantize_rows<Gpu>(call, call.tensor("x"), xq, a_scale);
    accumulate(xq, "w_qkv", *w.w_qkv, acc_view);
    const In ab{acc_view}, xs{a_scale}, ws{{const_cast<float*>(w.w_qkv_scale), DType::float32, {rows}, {}}};
    const Out qb{q}, kn{new_rows(k_cache, pos, T)}, vn{new_rows(v_cache, pos, T)};
    const auto args = [&](auto&& kernel) {
      call_kernel(kernel, call, ab, xs, ws, static_cast<int32_t>(h.hq), static_cast<int32_t>(h.dh),
                  static_cast<int32_t>(h.hkv), static_cast<int32_t>(pos), call.params.real("theta"),
                  call.params.choice("style") == "interleaved", qb, kn, vn);
    };
    act_f16 ? args(NPUKIT_TABLE(Gpu, qkv_rope_dequant_f16)) : args(NPUKIT_TABLE(Gpu, qkv_rope_dequant_f32));
  }
  // 2. The attention core.
  attend<Gpu>(call, q, o);
  // 3. o per token → int8; acc = o_q · w_oᵀ; y dequantized in x's dtype.
  {
    const TensorView oq = as_shape(aq, {T, hqdh}), acc_view = as_shape(acc, {T, D});
    quantize_rows<Gpu>(call, as_shape(o, {T, hqdh}), oq, a_scale);
    accumulate(oq, "w_o", *w.w_o, acc_view);
    const In ab{acc_view}, os{a_scale}, ws{{const_cast<float*>(w.w_o_scale), DType::float32, {D}, {}}};
    if (act_f16) {
      call_kernel(NPUKIT_TABLE(Gpu, dequantize_rows_f16), call, ab, os, ws, Out{call.tensor("y")});
    } else {
      call_kernel(NPUKIT_TABLE(Gpu, dequantize_rows_f32), call, ab, os, ws, Out{call.tensor("y")});
    }
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "qkv_attention";
  op.summary =
      "one layer's attention block: qkv = x w_qkv^T, RoPE on q and k, k and v written into the KV cache at "
      "pos ... pos+T-1 (in place), causal grouped-query attention, y = o w_o^T";
  const std::vector<DType> floats = {DType::float32, DType::float16};
  const std::vector<DType> weights = {DType::float32, DType::float16, DType::int8};
  // check() reads the mask and the scales on the host: from CUDA memory they are copied
  // there first (the int8 weights too, when no prepared op holds them: qkv_attention_run).
  TensorSpec mask{"mask", TensorSpec::Role::input, {"T", "S_max"}, {DType::float32}};
  mask.optional = true;
  mask.host_data = true;
  // Per-output-channel scales of int8 weights; check_weights requires them iff the weights are int8.
  TensorSpec w_qkv_scale{"w_qkv_scale", TensorSpec::Role::input, {"QKV"}, {DType::float32}};
  TensorSpec w_o_scale{"w_o_scale", TensorSpec::Role::input, {"D"}, {DType::float32}};
  w_qkv_scale.optional = w_o_scale.optional = true;
  w_qkv_scale.host_data = w_o_scale.host_data = true;
  op.tensors = {{"x", TensorSpec::Role::input, {"T", "D"}, floats},
                {"w_qkv", TensorSpec::Role::input, {"QKV", "D"}, weights},
                {"w_o", TensorSpec::Role::input, {"D", "HqDh"}, weights, "w_qkv"},
                w_qkv_scale,
                w_o_scale,
                {"k_cache", TensorSpec::Role::inout, {"Hkv", "S_max", "Dh"}, floats, "x"},
                {"v_cache", TensorSpec::Role::inout, {"Hkv", "S_max", "Dh"}, floats, "x"},
                mask,
                {"y", TensorSpec::Role::output, {"T", "D"}, floats, "x"}};
  op.params = {
      {"pos", ParamSpec::Kind::integer, "0", 0, 2147483647.0, {}, "cache position of the first new token; pos + T <= S_max"},
      {"heads", ParamSpec::Kind::integer, "0", 0, 1 << 20, {}, "query heads Hq; 0 = w_o's columns / head_dim"},
      {"kv_heads", ParamSpec::Kind::integer, "0", 0, 1 << 20, {}, "kv heads Hkv, a divisor of heads; 0 = k_cache's first dimension"},
      {"head_dim", ParamSpec::Kind::integer, "0", 0, 1 << 20, {}, "Dh, even; 0 = k_cache's last dimension"},
      {"theta", ParamSpec::Kind::real, "10000", 1.0, 1e12, {}, "RoPE base: pair i turns by p * theta^(-2i/head_dim)"},
      {"style", ParamSpec::Kind::choice, "half", 0, 0, {"interleaved", "half"},
       "RoPE pairs (2i, 2i+1) as GPT-J / Meta Llama, or (i, i + head_dim/2) as GPT-NeoX / Hugging Face"},
  };
  op.check = check;
  // Int8 weights have a packing step (VNNI layout and channel sums) worth keeping; float
  // weights are read as they are, so there is nothing to keep for them.
  for (const char* weight : {"w_qkv", "w_o"}) {
    op.constants[weight] = [weight](const TensorView& t) {
      if (t.dtype != DType::int8) {
        fail(Errc::invalid_argument,
             "qkv_attention: constant {} is {}: only int8 weights are packed (float weights are read as they are; pass "
             "them to each run)",
             weight, dtype_name(t.dtype));
      }
      auto w = std::make_shared<const layouts::PackedInt8Weights>(
          layouts::pack_int8_weights(static_cast<const int8_t*>(t.data), t.shape.at(0), t.shape.at(1)));
      return PackedConstant{w, w->bytes()};
    };
  }
  op.kernels = {{"cpu", qkv_attention_run<false>}, {"gpu-opencl", qkv_attention_run<true>}, {"gpu-cuda", qkv_attention_run<true>}};
  op.cpu_tiers = {"avx512", "avx2", "sse41"};
  op.cuda_tensors = true;
  return op;
}

}  // namespace

const OpSpec& qkv_attention_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
