// CPU schedules of per-token quantization and of the per-row dequantization
// (ops/per_token_quant.h).
#pragma once

#include "Halide.h"
#include "ops/per_token_quant.h"

namespace npukit::schedules::cpu {

// The lanes of the row maximum's partial maxima: one native vector of the stored type.
int quant_lanes(const Halide::Target& target, Halide::Type stored);

// p.scale and p.q are the kernel's outputs. Per row (rows in parallel): the maximum over
// one vector of partial maxima, then s; then q vectorized along the row. A row is read
// twice (the second time from L1/L2).
void schedule_per_token_quant(ops::PerTokenQuant& p, const Halide::Target& target);

// y(n, t) = dequantize(acc(n, t), ...): vectorized along n, rows in parallel.
void schedule_dequantize_rows(Halide::Func y, const Halide::Target& target);

}  // namespace npukit::schedules::cpu
