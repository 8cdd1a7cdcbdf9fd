// LayerNorm with bias as a pure Halide algorithm, over the innermost dimension, as GPT-style
// decoders (GPT-2, GPT-J, Falcon, Phi) normalize before attention and the MLP:
//   y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias,  var = mean((x - mean(x))²).
// No scheduling here; schedules/<target>/layer_norm.cpp does that.
#pragma once

#include "Halide.h"

namespace npukit::ops {

struct LayerNorm {
  Halide::Var h{"h"}, row{"row"};   // h indexes hidden (innermost), row the outer dimension
  Halide::RDom k;                   // runs over hidden
  Halide::Func sum{"sum"};          // per row: Σx in fp64
  Halide::Func mean{"mean"};        // per row: Σx / hidden
  Halide::Func sqdev{"sqdev"};      // per row: Σ(x - mean)² in fp64
  Halide::Func inv_std{"inv_std"};  // per row: 1 / sqrt(sqdev / hidden + eps), fp64
  Halide::Func out{"layer_norm"};   // y(h, row) in the output type
};

// `x(h, row)`, `weight(h)` and `bias(h)` may be of any float type; arithmetic is fp64 and the
// result is rounded once. `target` picks the fp16 conversions (ops/float_convert.h).
LayerNorm define_layer_norm(Halide::Func x, Halide::Func weight, Halide::Func bias, Halide::Expr hidden,
                            Halide::Expr eps, Halide::Type out_type, const Halide::Target& target);

}  // namespace npukit::ops

// Its CPU schedule (schedules/cpu/layer_norm.cpp), which the Generator applies.
namespace npukit::schedules::cpu {
void schedule_layer_norm(ops::LayerNorm& op, Halide::Expr hidden, const Halide::Target& target);
}  // namespace npukit::schedules::cpu

// ---- Section NPUKIT_ALGORITHM_layer_norm: the algorithm's definition and its Generator, compiled once
// (npukit_add_operator writes its unit). Above: what the schedules see.
#ifdef NPUKIT_ALGORITHM_layer_norm

#include "ops/float_convert.h"

namespace npukit::ops {

using namespace Halide;

LayerNorm define_layer_norm(Func x, Func weight, Func bias, Expr hidden, Expr eps, Type out_type, const Target& target) {
  LayerNorm op;
  Var h = op.h, row = op.row;
  op.k = RDom(0, hidden, "k");
  const Expr n = cast<double>(hidden);

  // Two passes in fp64, the mean first and then the squared deviations from it: the
  // one-pass E[x²] - E[x]² cancels catastrophically for rows with a large mean and a small
  // spread (activations offset by 1e3 with unit variance lose every bit of the variance in
  // fp32), and fp64 holds every fp32 square and sum (|x| up to 3.4e38) without overflow. The
  // op is memory bound; the row is read twice while it sits in L1/L2.
  Expr v = cast<double>(widen_to_f32(x(op.k, row), target));
  op.sum(row) = cast<double>(0);
  op.sum(row) += v;
  op.mean(row) = op.sum(row) / n;
  Expr d = v - op.mean(row);
  op.sqdev(row) = cast<double>(0);
  op.sqdev(row) += d * d;
  // strict_float: IEEE sqrt and division, no reciprocal estimates, and NaN/Inf as the
  // contract says (golden/layer_norm.h).
  op.inv_std(row) = strict_float(cast<double>(1) / sqrt(op.sqdev(row) / n + cast<double>(eps)));

  // Normalize, scale and shift in fp64, then one rounding to the output type (through fp32,
  // which holds every fp16 value and rounds an fp64 to fp16 as one rounding would but for
  // halfway cases, well inside the fp16 tolerance).
  Expr xn = (cast<double>(widen_to_f32(x(h, row), target)) - op.mean(row)) * op.inv_std(row);
  Expr y = xn * cast<double>(widen_to_f32(weight(h), target)) + cast<double>(widen_to_f32(bias(h), target));
  op.out(h, row) = narrow_from_f32(cast<float>(strict_float(y)), out_type, target);
  return op;
}

}  // namespace npukit::ops

// The LayerNorm Generator: one source for every CPU tier's ahead-of-time kernel. Storage
// types come from the `x.type`, `weight.type`, `bias.type` and `y.type` generator params
// (CMakeLists.txt, npukit_add_operator_kernel).
#include "Halide.h"
#include "ops/float_convert.h"

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

#endif  // NPUKIT_ALGORITHM_layer_norm
