#pragma once

#include "Halide.h"
#include "ops/add_rms_norm.h"

namespace npukit::schedules::gpu {

// y as rms_norm's GPU schedule (one block per row, a three-level shared-memory tree for
// the fp64 sum of squares), recomputing x + residual where it reads it; the new residual
// as its own elementwise kernel. The runtime gives the two residual arguments separate
// device buffers (host tensors only), so the order of the two kernels does not matter.
void schedule_add_rms_norm(ops::AddRmsNorm& op, Halide::Expr hidden, const Halide::Target& target);

}  // namespace npukit::schedules::gpu
