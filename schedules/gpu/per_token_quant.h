// GPU schedules of per-token quantization and of the per-row dequantization
// (ops/per_token_quant.h); same shape as schedules/cpu/per_token_quant.h.
#pragma once

#include "Halide.h"
#include "ops/per_token_quant.h"

namespace npukit::schedules::gpu {

// The lanes of the row maximum's partial maxima: one per thread of a block.
int quant_lanes(const Halide::Target& target);

// Two kernels. The scales: one block per row, each thread the maximum over a coalesced
// stride of the row (the partial maxima in shared memory), one thread the rest. Then q:
// blocks of 256 elements along the row, reading their row's scale.
void schedule_per_token_quant(ops::PerTokenQuant& p, const Halide::Target& target);

// y(n, t) = dequantize(acc(n, t), ...): blocks of 256 channels of one row.
void schedule_dequantize_rows(Halide::Func y, const Halide::Target& target);

}  // namespace npukit::schedules::gpu
