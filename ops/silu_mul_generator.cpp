// The SiLU-and-multiply Generator: one source for the ahead-of-time kernels and for JIT
// users. Storage types come from the `gate_up.type` and `y.type` generator params.
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/silu_mul.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class SiluMulGenerator : public Halide::Generator<SiluMulGenerator> {
 public:
  Input<Halide::Buffer<void, 3>> gate_up{"gate_up"};  // (ffn, 2, tokens): gate, then up, per token
  Output<Halide::Buffer<void, 2>> y{"y"};             // (ffn, tokens)

  void generate() {
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::set_mins_to_zero(gate_up);
    ops::SiluMul op = ops::define_silu_mul(gate_up, y.type(), get_target());
    y = op.out;
    ops::set_mins_to_zero(y);
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_silu_mul(op, get_target());
    } else {
      schedules::cpu::schedule_silu_mul(op, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::SiluMulGenerator, npukit_silu_mul)
