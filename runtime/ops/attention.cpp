// The registry entry of the attention core (op `attention`).
#include <algorithm>
#include <cmath>

#include "kernels/attention_decode_f16.h"
#include "kernels/attention_decode_f16_gpu.h"
#include "kernels/attention_decode_f16_unmasked.h"
#include "kernels/attention_decode_f16_unmasked_gpu.h"
#include "kernels/attention_decode_f32.h"
#include "kernels/attention_decode_f32_gpu.h"
#include "kernels/attention_decode_f32_unmasked.h"
#include "kernels/attention_decode_f32_unmasked_gpu.h"
#include "kernels/attention_f16_gpu.h"
#include "kernels/attention_f32_gpu.h"
#include "runtime/error.h"
#include "runtime/halide_call.h"
#include "runtime/gpu_memory.h"
#include "runtime/kernel_call.h"
#include "runtime/ops/split_attention.h"
#include "runtime/registry.h"
#include "runtime/scratch_arena.h"

namespace npukit {
namespace {

void check(const Call& call) {
  const int64_t hq = call.dim("Hq"), hkv = call.dim("Hkv"), s_max = call.dim("S_max");
  if (hq % hkv != 0) {
    fail(Errc::invalid_argument,
         "attention: Hq = {} is not a multiple of Hkv = {} (query head h reads kv head h / (Hq / Hkv))", hq, hkv);
  }
  const TensorView& p = call.tensor("positions");
  const auto* pos = static_cast<const int32_t*>(p.data);
  for (int64_t t = 0; t < p.numel(); ++t) {
    if (pos[t] < 0 || pos[t] >= s_max) {
      fail(Errc::invalid_argument, "attention: positions[{}] = {}: must be in [0, S_max = {})", t, pos[t], s_max);
    }
  }
}

// The mask, or zeros when the call has none: one row of S_max zeros that every token's row
// repeats, where the kernels read it (a T × S_max upload per GPU call before).
TensorView mask_of(const Call& call, RunScratch& scratch) {
  if (auto it = find_name(call.tensors, "mask"); it != call.tensors.end()) return it->second;
  return scratch.zero_rows(call.dim("T"), call.dim("S_max"));
}

template <class Kernel>
void run_general(const Kernel& kernel, const Call& call) {
  ScratchFrame frame(call);
  RunScratch scratch(call, frame);
  call_kernel(kernel, call, In{call.tensor("q")}, In{call.tensor("k_cache")}, In{call.tensor("v_cache")},
              In{call.tensor("positions")}, In{mask_of(call, scratch)}, Out{call.tensor("o")});
}

// The split kernel, token by token, at the tokens' positions (check() has kept them inside
// the cache).
template <class Kernel, class UnmaskedKernel>
void run_decode(const Kernel& kernel, const UnmaskedKernel& unmasked, const Call& call) {
  const auto mask = find_name(call.tensors, "mask");
  const auto* positions = static_cast<const int32_t*>(call.tensor("positions").data);
  attend_token_by_token(kernel, unmasked, call, call.tensor("q"), call.tensor("k_cache"), call.tensor("v_cache"),
                        mask != call.tensors.end() ? &mask->second : nullptr,
                        [&](int64_t t) { return positions[t]; }, call.tensor("o"));
}

// The split kernel: tasks (CPU) or blocks (GPU) over (cache split, kv head) that read each
// k and v row once for all the query heads of the group. A CPU runs it for every token in
// turn: for T > 1 the general kernel (one task per query head and token, each score a dot
// product with its own horizontal sum, every k and v row read once per query head) ran 7x
// slower than the split kernel per token (Zen 4, T = 64 at S = 2048, cache in L3: 233 ->
// 32 ms on one thread; docs/performance.md). A GPU runs the general kernel for T > 1 (one
// launch).
template <bool Gpu>
void attention_run(const Call& call) {
  const bool f16 = call.tensor("q").dtype == DType::float16;
  if (!Gpu || call.dim("T") == 1) {
    if (f16) {
      run_decode(NPUKIT_TABLE(Gpu, attention_decode_f16), NPUKIT_TABLE(Gpu, attention_decode_f16_unmasked), call);
    } else {
      run_decode(NPUKIT_TABLE(Gpu, attention_decode_f32), NPUKIT_TABLE(Gpu, attention_decode_f32_unmasked), call);
    }
  } else if constexpr (Gpu) {
    if (f16) {
      run_general(kernels::attention_f16_gpu, call);
    } else {
      run_general(kernels::attention_f32_gpu, call);
    }
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "attention";
  op.summary = "o = softmax(q k^T / sqrt(Dh) + mask, causal) v over a KV cache, grouped-query";
  const std::vector<DType> floats = {DType::float32, DType::float16};
  TensorSpec mask{"mask", TensorSpec::Role::input, {"T", "S_max"}, {DType::float32}};
  mask.optional = true;
  // Read on the host: check() keeps every position inside the cache, and decode passes its
  // one position as a scalar. From a CUDA tensor, those T int32s are copied to the host.
  TensorSpec positions{"positions", TensorSpec::Role::input, {"T"}, {DType::int32}};
  positions.host_data = true;
  op.tensors = {{"q", TensorSpec::Role::input, {"T", "Hq", "Dh"}, floats},
                {"k_cache", TensorSpec::Role::input, {"Hkv", "S_max", "Dh"}, floats, "q"},
                {"v_cache", TensorSpec::Role::input, {"Hkv", "S_max", "Dh"}, floats, "q"},
                positions,
                mask,
                {"o", TensorSpec::Role::output, {"T", "Hq", "Dh"}, floats, "q"}};
  op.check = check;
  op.cuda_tensors = true;
  op.kernels = {{"cpu", attention_run<false>}, {"gpu-opencl", attention_run<true>}, {"gpu-cuda", attention_run<true>}};
  op.cpu_tiers = {"avx512", "avx2", "sse41"};
  return op;
}

}  // namespace

const OpSpec& attention_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
