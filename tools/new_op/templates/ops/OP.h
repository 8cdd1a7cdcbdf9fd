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

// ---- Section NPUKIT_ALGORITHM_{{op}}: the algorithm's definition and its Generator, compiled once
// (npukit_add_operator writes its unit). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_{{op}}

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

{{Op}} define_{{op}}(Func x, Expr alpha, Type out_type, const Target& target) {
  {{Op}} op;
  op.out(op.c, op.row) = narrow_from_f32(widen_to_f32(x(op.c, op.row), target) * alpha, out_type, target);
  return op;
}

}  // namespace npukit::ops

// The {{op}} Generator: one source for every CPU tier's ahead-of-time kernel. Storage types
// come from the `x.type` and `y.type` generator params (CMakeLists.txt).
#include "Halide.h"
#include "ops/float_convert.h"

namespace npukit {
namespace {

class {{Op}}Generator : public Halide::Generator<{{Op}}Generator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};  // (cols, rows): cols is innermost
  Input<float> alpha{"alpha"};
  Output<Halide::Buffer<void, 2>> y{"y"};

  void generate() {
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::{{Op}} op = ops::define_{{op}}(x, alpha, y.type(), get_target());
    y = op.out;
    schedules::cpu::schedule_{{op}}(op, x.dim(0).extent(), get_target());
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::{{Op}}Generator, {{op}})

#endif  // NPUKIT_ALGORITHM_{{op}}
