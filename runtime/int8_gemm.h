// INT8 GEMM below the registry: what the op's entry, benches and frameworks that pack
// their weights once at load time call (docs/ops/int8_gemm.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "layouts/vnni_int8.h"
#include "runtime/scratch_arena.h"
#include "runtime/tensor.h"

namespace npukit {

// The largest K for which Σ_k (a − zp)·w cannot overflow int32 for any int8 a and w.
int64_t int8_k_limit(int32_t a_zero_point);

// acc[M, N] (int32) = Σ_k (a[M, K] − a_zero_point) · w[n, k], exact. `a` is int8 and
// contiguous; K may be any size (a copy pads it to whole groups of 4 when needed).
// `forced_tier` as in --target cpu:<tier>; empty picks the best this CPU runs. `family`
// "gpu-opencl" or "gpu-cuda" runs the GPU kernels instead (host tensors, copied). The
// padded copy of `a`, when one is needed, comes from `scratch` when given (a prepared op's
// run: no allocation), else from the heap.
void int8_gemm_accumulate(const TensorView& a, const layouts::PackedInt8Weights& w, int32_t a_zero_point,
                          const TensorView& acc, std::string_view forced_tier = "", std::string_view family = "cpu",
                          ScratchFrame* scratch = nullptr);

// A real multiplier as int32 multiplier · 2^shift with the multiplier in [2^30, 2^31)
// (gemmlowp / TFLite QuantizeMultiplier); nullopt unless finite, > 0 and shift in [−31, 30].
struct QuantizedMultiplier {
  int32_t multiplier;
  int shift;
};
std::optional<QuantizedMultiplier> quantize_multiplier(double real_multiplier);

}  // namespace npukit
