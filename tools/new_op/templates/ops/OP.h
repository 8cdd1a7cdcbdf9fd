// {{op}} as a pure Halide algorithm. No scheduling here; schedules/<target>/{{op}}.cpp does
// that. A placeholder: y = alpha * x, elementwise. Replace it with the op's algorithm.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct {{Op}} {
  Halide::Var c{"c"}, row{"row"};  // c indexes cols (innermost), row the outer dimension
  Halide::Func out{"{{op}}"};      // y(c, row) in the output type
};

// `x(c, row)` may be of any float type; arithmetic is fp32. `target` picks the fp16
// conversions (ops/float_convert.h).
{{Op}} define_{{op}}(Halide::Func x, Halide::Expr alpha, Halide::Type out_type, const Halide::Target& target);

}  // namespace npukit::ops

// Its CPU schedule (schedules/cpu/{{op}}.cpp), which the Generator applies.
namespace npukit::schedules::cpu {
void schedule_{{op}}(ops::{{Op}}& op, Halide::Expr cols, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
