// The int8-weight path of the fused qkv_attention op below the registry: what a framework
// that packs its weights once at load time calls (docs/ops/attention.md, "Int8 weights").
// The registry entry packs on every call and then runs the same function.
#pragma once

#include <vector>

#include "layouts/vnni_int8.h"
#include "runtime/op_spec.h"

namespace npukit {

struct QkvInt8Weights {
  layouts::PackedInt8Weights w_qkv;  // [(Hq + 2·Hkv)·Dh, D]
  layouts::PackedInt8Weights w_o;    // [D, Hq·Dh]
  std::vector<float> w_qkv_scale;    // per output channel of each
  std::vector<float> w_o_scale;
};

// Packs a bound call's int8 w_qkv and w_o and copies their scales (one pass over every
// weight: keep the result for as long as the weights do not change). A prepared op's
// constants (Call::packed_constant) are taken as they are.
QkvInt8Weights pack_qkv_int8_weights(const Call& call);

// Runs `call` (bound to the qkv_attention op with int8 weights: its shapes, parameters,
// x, caches, mask and y) with the packed weights `w`, which must have been packed from
// weights of the call's shapes; the call's own w_qkv, w_o and scales are not read.
void qkv_attention_int8(const Call& call, const QkvInt8Weights& w);

}  // namespace npukit
