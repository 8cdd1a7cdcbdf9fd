// The RoPE Generator: `style` picks the pair layout at compile time (the two layouts want
// different loops); storage types come from the `x.type` and `y.type` generator params.
#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/rope.h"
#include "schedules/gpu/gpu_target.h"

namespace npukit {
namespace {

class RopeGenerator : public Halide::Generator<RopeGenerator> {
 public:
  GeneratorParam<ops::RopeStyle> style{"style", ops::RopeStyle::interleaved,
                                       {{"interleaved", ops::RopeStyle::interleaved}, {"half", ops::RopeStyle::half}}};
  Input<Halide::Buffer<void, 3>> x{"x"};  // (head_dim, heads, tokens): head_dim innermost
  Input<Halide::Buffer<int32_t, 1>> positions{"positions"};
  Input<double> theta{"theta"};
  Input<int32_t> rotary_dim{"rotary_dim"};
  Output<Halide::Buffer<void, 3>> y{"y"};

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    // npukit passes every buffer with min 0; saying so lets the parity of d be known at
    // compile time once the schedule splits it.
    ops::set_mins_to_zero(x, positions);
    Expr head_dim = x.dim(0).extent();
    Func xf("xf");
    Var d, h, t;
    xf(d, h, t) = ops::widen_to_f32(x(d, h, t), get_target());
    ops::RopeAngles angles = ops::rope_angles(positions, theta, rotary_dim);
    ops::Rope rope = ops::apply_rope(xf, angles, style, rotary_dim);
    Func out("rope_out");
    out(rope.d, rope.h, rope.t) = ops::narrow_from_f32(rope.out(rope.d, rope.h, rope.t), y.type(), get_target());
    y = out;
    ops::set_mins_to_zero(y);
    const bool widened = x.type().bits() == 16;
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_rope(angles, rope, xf, widened, out, style, head_dim, get_target());
    } else {
      schedules::cpu::schedule_rope(angles, rope, xf, widened, out, style, head_dim, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::RopeGenerator, npukit_rope)

namespace npukit {
namespace {

// RoPE, half style, rotary_dim = head_dim (Hugging Face Llama): rows seen as two halves,
// x(i, j, h, t) = row[j·half + i], so the pairs are dense vectors.
class RopeHalfRowsGenerator : public Halide::Generator<RopeHalfRowsGenerator> {
 public:
  Input<Halide::Buffer<void, 4>> x{"x"};  // (half, 2, heads, tokens)
  Input<Halide::Buffer<int32_t, 1>> positions{"positions"};
  Input<double> theta{"theta"};
  Output<Halide::Buffer<void, 4>> y{"y"};

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    ops::set_mins_to_zero(x, positions);
    x.dim(1).set_extent(2);
    Expr half = x.dim(0).extent();
    Func xf("xf");
    Var i, j, h, t;
    xf(i, j, h, t) = ops::widen_to_f32(x(i, j, h, t), get_target());
    ops::RopeAngles angles = ops::rope_angles(positions, theta, 2 * half);
    Func rotated = ops::apply_rope_half_rows(xf, angles);
    Func out("rope_out");
    Var oi = rotated.args()[0], oj = rotated.args()[1], oh = rotated.args()[2], ot = rotated.args()[3];
    out(oi, oj, oh, ot) = ops::narrow_from_f32(rotated(oi, oj, oh, ot), y.type(), get_target());
    y = out;
    ops::set_mins_to_zero(y);
    y.dim(1).set_extent(2);
    if (schedules::gpu::is_gpu(get_target())) {
      schedules::gpu::schedule_rope_half_rows(angles, out, half, get_target());
    } else {
      schedules::cpu::schedule_rope_half_rows(angles, out, half, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::RopeHalfRowsGenerator, npukit_rope_half_rows)
