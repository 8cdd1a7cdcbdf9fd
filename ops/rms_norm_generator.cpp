// The RMSNorm Generator: one source for the ahead-of-time kernels and for JIT users.
// Storage types come from the `x.type`, `weight.type` and `y.type` generator params.
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/rms_norm.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class RmsNormGenerator : public Halide::Generator<RmsNormGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};  // (hidden, rows): hidden is innermost
  Input<Halide::Buffer<void, 1>> weight{"weight"};
  Input<float> eps{"eps"};
  Output<Halide::Buffer<void, 2>> y{"y"};

  void generate() {
    Halide::Expr hidden = x.dim(0).extent();
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::RmsNorm op = ops::define_rms_norm(x, weight, hidden, eps, y.type(), get_target());
    y = op.out;
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_rms_norm(op, hidden, get_target());
    } else {
      schedules::cpu::schedule_rms_norm(op, hidden, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::RmsNormGenerator, npukit_rms_norm)
