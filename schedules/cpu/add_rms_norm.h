#pragma once

#include "Halide.h"
#include "ops/add_rms_norm.h"

namespace npukit::schedules::cpu {

// rms_norm's schedule (tasks of 4 rows, each row's sum of squares and scaling while the row
// is in L1) with the row's x + residual kept in a row buffer, and the new residual row
// written after the row's norm (compute_with): every row is read once and the in-place
// update never runs ahead of the reads.
void schedule_add_rms_norm(ops::AddRmsNorm& op, Halide::Expr hidden, const Halide::Target& target);

}  // namespace npukit::schedules::cpu
