// vLLM's fused_add_rms_norm as a pure Halide algorithm: the residual stream's update
// r = x + residual, rounded to the residual's storage type, and RMSNorm of that r
// (ops/rms_norm's algorithm). No scheduling here; schedules/<target>/add_rms_norm.cpp
// does that.
#pragma once

#include "Halide.h"
#include "ops/rms_norm.h"

namespace npukit::ops {

struct AddRmsNorm {
  // r(h, row) in the storage type, as the norm reads it. The new residual is the same
  // expression in its own Func, so that a schedule can write it after the norm has read
  // its row: the residual is updated in place, and r must not read an updated element.
  Halide::Func sum{"residual_sum"};
  Halide::Func residual_out{"residual_out"};
  RmsNorm norm;  // norm.out: y(h, row) in the output type
};

// x + residual of any float types (or uint16 fp16 bits): one fp32 addition, rounded once
// to `residual_type`.
Halide::Expr add_residual(Halide::Expr x, Halide::Expr residual, Halide::Type residual_type,
                          const Halide::Target& target);

// `x(h, row)`, `residual(h, row)` and `weight(h)` of any float type (or uint16 fp16 bits);
// the sum is fp32, then rounded to `residual_type`; the norm is define_rms_norm's.
AddRmsNorm define_add_rms_norm(Halide::Func x, Halide::Func residual, Halide::Func weight, Halide::Expr hidden,
                               Halide::Expr eps, Halide::Type residual_type, Halide::Type out_type,
                               const Halide::Target& target);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/add_rms_norm.cpp, schedules/gpu/add_rms_norm.cpp);
// the Generator (ops/add_rms_norm_generator.cpp) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_add_rms_norm(ops::AddRmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_add_rms_norm(ops::AddRmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::gpu
