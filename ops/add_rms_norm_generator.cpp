// The residual-add + RMSNorm Generator: one source for the ahead-of-time kernels and for
// JIT users. Storage types come from the `x.type`, `residual.type`, `weight.type`,
// `y.type` and `residual_out.type` generator params. The runtime passes the caller's
// residual tensor as both `residual` and `residual_out`: it is updated in place.
#include "Halide.h"
#include "ops/add_rms_norm.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class AddRmsNormGenerator : public Halide::Generator<AddRmsNormGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};  // (hidden, rows): hidden is innermost
  Input<Halide::Buffer<void, 2>> residual{"residual"};
  Input<Halide::Buffer<void, 1>> weight{"weight"};
  Input<float> eps{"eps"};
  Output<Halide::Buffer<void, 2>> y{"y"};
  Output<Halide::Buffer<void, 2>> residual_out{"residual_out"};  // x + residual

  void generate() {
    Halide::Expr hidden = x.dim(0).extent();
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::set_mins_to_zero(x, residual, weight);
    ops::AddRmsNorm op = ops::define_add_rms_norm(x, residual, weight, hidden, eps, residual_out.type(), y.type(),
                                                  get_target());
    y = op.norm.out;
    residual_out = op.residual_out;
    ops::set_mins_to_zero(y, residual_out);
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_add_rms_norm(op, hidden, get_target());
    } else {
      schedules::cpu::schedule_add_rms_norm(op, hidden, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::AddRmsNormGenerator, npukit_add_rms_norm)
