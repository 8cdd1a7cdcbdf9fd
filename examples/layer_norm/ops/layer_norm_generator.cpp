// The LayerNorm Generator: one source for every CPU tier's ahead-of-time kernel. Storage
// types come from the `x.type`, `weight.type`, `bias.type` and `y.type` generator params
// (CMakeLists.txt, npukit_add_operator_kernel).
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/layer_norm.h"

namespace npukit {
namespace {

class LayerNormGenerator : public Halide::Generator<LayerNormGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};  // (hidden, rows): hidden is innermost
  Input<Halide::Buffer<void, 1>> weight{"weight"};
  Input<Halide::Buffer<void, 1>> bias{"bias"};
  Input<float> eps{"eps"};
  Output<Halide::Buffer<void, 2>> y{"y"};

  void generate() {
    Halide::Expr hidden = x.dim(0).extent();
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::LayerNorm op = ops::define_layer_norm(x, weight, bias, hidden, eps, y.type(), get_target());
    y = op.out;
    schedules::cpu::schedule_layer_norm(op, hidden, get_target());
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::LayerNormGenerator, layer_norm)
