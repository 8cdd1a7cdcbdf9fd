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
