// vLLM's fused_add_rms_norm as a pure Halide algorithm: the residual stream's update
// r = x + residual, rounded to the residual's storage type, and RMSNorm of that r
// (ops/rms_norm's algorithm). No scheduling here; schedules/<target>/add_rms_norm.cpp
// does that.
#pragma once

#include "Halide.h"
#include "ops/rms_norm.h"

namespace npukit::ops {

struct AddRmsNorm {
  // r(h, row) in the storage type, as the norm reads it. The new residual is a Func of its
  // own that reads r, so that a schedule can write it after the norm has read its row (the
  // residual is updated in place, and r must not read an updated element): from r's row
  // buffer (the CPU: no second x + residual and its conversions; fp16 15-23% faster on Zen 3),
  // or with r inlined (the GPU: the same expression recomputed).
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
                               const Halide::Target& target, SquareSum sum = SquareSum::f64);

}  // namespace npukit::ops

// Its schedules, one per target (how and why: schedules/cpu/add_rms_norm.cpp, schedules/gpu/add_rms_norm.cpp);
// the Generator (below) applies the one of its target.
namespace npukit::schedules::cpu {
void schedule_add_rms_norm(ops::AddRmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::cpu
namespace npukit::schedules::gpu {
void schedule_add_rms_norm(ops::AddRmsNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::gpu

// ---- Section NPUKIT_ALGORITHM_add_rms_norm: the algorithm's definition and its Generators, compiled once,
// into npukit_halide_ops (cmake/NpukitOperators.cmake). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_add_rms_norm

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

Expr add_residual(Expr x, Expr residual, Type residual_type, const Target& target) {
  // For fp16 this is the correctly rounded fp16 sum (fp32 has more than 2·11 + 2 bits),
  // what an fp16 `x + residual` gives.
  return narrow_from_f32(strict_float(widen_to_f32(x, target) + widen_to_f32(residual, target)), residual_type,
                         target);
}

AddRmsNorm define_add_rms_norm(Func x, Func residual, Func weight, Expr hidden, Expr eps, Type residual_type,
                               Type out_type, const Target& target, SquareSum sum) {
  AddRmsNorm op;
  Var h("h"), row("row");
  op.sum(h, row) = add_residual(x(h, row), residual(h, row), residual_type, target);
  op.residual_out(h, row) = op.sum(h, row);
  op.norm = define_rms_norm(op.sum, weight, hidden, eps, out_type, target, sum);
  return op;
}

}  // namespace npukit::ops

// The residual-add + RMSNorm Generator: one source for the ahead-of-time kernels and for
// JIT users. Storage types come from the `x.type`, `residual.type`, `weight.type`,
// `y.type` and `residual_out.type` generator params. The runtime passes the caller's
// residual tensor as both `residual` and `residual_out`: it is updated in place.
#include "Halide.h"
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
    const bool gpu = schedules::gpu::is_gpu(get_target());
    const ops::SquareSum sum = gpu ? ops::SquareSum::f64 : ops::square_sum_for(residual_out.type());
    ops::AddRmsNorm op = ops::define_add_rms_norm(x, residual, weight, hidden, eps, residual_out.type(), y.type(),
                                                  get_target(), sum);
    y = op.norm.out;
    residual_out = op.residual_out;
    ops::set_mins_to_zero(y, residual_out);
    if (gpu) {
      schedules::gpu::schedule_add_rms_norm(op, hidden, get_target());
    } else {
      schedules::cpu::schedule_add_rms_norm(op, hidden, get_target());
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::AddRmsNormGenerator, npukit_add_rms_norm)

#endif  // NPUKIT_ALGORITHM_add_rms_norm
