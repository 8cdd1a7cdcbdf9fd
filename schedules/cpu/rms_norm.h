#pragma once

#include "Halide.h"
#include "ops/rms_norm.h"

namespace npukit::schedules::cpu {

// Rows in parallel, each row in two vector passes (sum of squares, then scale) while it
// is still in L1/L2, so DRAM sees one read and one write of the tensor.
void schedule_rms_norm(ops::RmsNorm& op, Halide::Expr hidden, const Halide::Target& target);

}  // namespace npukit::schedules::cpu
