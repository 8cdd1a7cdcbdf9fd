// RMSNorm as a pure Halide algorithm: y = x / sqrt(mean(x²) + eps) * weight over the
// innermost dimension. No scheduling here; schedules/<target>/rms_norm.cpp does that.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct RmsNorm {
  Halide::Var h{"h"}, row{"row"};  // h indexes hidden (innermost), row the outer dimension
  Halide::RDom k;                  // runs over hidden
  Halide::Func sumsq{"sumsq"};     // per row: Σx² in fp64
  Halide::Func inv_rms{"inv_rms"};  // per row: Tuple(a, b), fp32, a·b = 1 / sqrt(mean(x²) + eps)
  Halide::Func out{"rms_norm"};    // y(h, row) in the output type
};

// `x(h, row)` and `weight(h)` may be of any float type; arithmetic is fp32.
// `target` picks the fp16 conversions (ops/float_convert.h).
RmsNorm define_rms_norm(Halide::Func x, Halide::Func weight, Halide::Expr hidden,
                        Halide::Expr eps, Halide::Type out_type, const Halide::Target& target);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/rms_norm.cpp, schedules/gpu/rms_norm.cpp);
// the Generator (ops/rms_norm_generator.cpp) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_rms_norm(ops::RmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_rms_norm(ops::RmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::gpu
