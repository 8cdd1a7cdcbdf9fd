// The {{op}} Generator: one source for every CPU tier's ahead-of-time kernel. Storage types
// come from the `x.type` and `y.type` generator params (CMakeLists.txt).
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/{{op}}.h"

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
