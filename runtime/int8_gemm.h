// INT8 GEMM below the registry: what the op's entry, benches and frameworks that pack
// their weights once at load time call (docs/ops/int8_gemm.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "layouts/vnni_int8.h"
#include "runtime/op_spec.h"
#include "runtime/scratch_arena.h"
#include "runtime/tensor.h"

namespace npukit {

// The largest K for which Σ_k (a − zp)·w cannot overflow int32 for any int8 a and w.
int64_t int8_k_limit(int32_t a_zero_point);

// acc[M, N] (int32) = Σ_k (a[M, K] − a_zero_point) · w[n, k], exact. `a` is int8 and
// contiguous; K may be any size (on the CPU a copy pads it to the weights' k_pad, a
// multiple of 64, when needed). `forced_tier` as in --target cpu:<tier>; empty picks the
// best this CPU runs.
// `family` "gpu-opencl" or "gpu-cuda" runs the GPU kernels instead (int8_gemm_accumulate_gpu
// with the weights in host memory). The padded copy of `a`, when one is needed, comes from
// `scratch` when given (a prepared op's run: no allocation), else from the heap.
void int8_gemm_accumulate(const TensorView& a, const layouts::PackedInt8Weights& w, int32_t a_zero_point,
                          const TensorView& acc, std::string_view forced_tier = "", std::string_view family = "cpu",
                          ScratchFrame* scratch = nullptr);

// The views of packed weights the kernels read: the bytes (N/16, K/4, 16, 4) and their row
// sums (N), both padded.
struct Int8WeightViews {
  TensorView packed, sums;
};
Int8WeightViews int8_weight_views(const layouts::PackedInt8Weights& w);

// The views of `w` that the GPU kernels read: the device copies of a prepared op's packed
// constant `name` when `w` is that constant, else `w` in host memory.
Int8WeightViews int8_gpu_weights(const Call& call, std::string_view name, const layouts::PackedInt8Weights& w);

// The same on a GPU family, with every tensor in host or the family's device memory: `a`
// as the caller holds it (no padded copy: the kernels read zeros past K), `w` as
// int8_weight_views gives it, or its device copies.
void int8_gemm_accumulate_gpu(const TensorView& a, const Int8WeightViews& w, int32_t a_zero_point,
                              const TensorView& acc, const std::string& family);

// A real multiplier as int32 multiplier · 2^shift with the multiplier in [2^30, 2^31)
// (gemmlowp / TFLite QuantizeMultiplier); nullopt unless finite, > 0 and shift in [−31, 30].
struct QuantizedMultiplier {
  int32_t multiplier;
  int shift;
};
std::optional<QuantizedMultiplier> quantize_multiplier(double real_multiplier);

}  // namespace npukit
