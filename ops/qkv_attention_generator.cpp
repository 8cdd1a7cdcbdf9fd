// The Generators of the fused qkv_attention op's projections: `npukit_qkv_rope` (x · w_qkvᵀ,
// RoPE of q and k, k and v written into the cache) and `npukit_linear` (the output
// projection), and for int8 weights `npukit_qkv_rope_dequant` (the same from int32
// accumulators). Storage types come from the `*.type` generator params.
#include <tuple>

#include "Halide.h"
#include "ops/float_convert.h"
#include "ops/generator_buffers.h"
#include "ops/per_token_quant.h"
#include "ops/qkv_attention.h"
#include "schedules/cpu/qkv_attention.h"
#include "schedules/gpu/qkv_attention.h"

namespace npukit {
namespace {

// The rotated q, and k and v as the cache rows they overwrite ((d, t, h), narrowed to the
// cache's type), bound to generator `g`'s outputs q, k_new and v_new.
template <class Gen>
std::tuple<Halide::Func, Halide::Func, Halide::Func> bind_rope_outputs(Gen& g, const ops::QkvRope& a,
                                                                       const Halide::Target& target) {
  using namespace Halide;
  Var d, h, t;
  Func qo("q_out"), ko("k_out"), vo("v_out");
  qo(d, h, t) = a.q(d, h, t);
  ko(d, t, h) = ops::narrow_from_f32(a.k(d, h, t), g.k_new.type(), target);
  vo(d, t, h) = ops::narrow_from_f32(a.v(d, h, t), g.v_new.type(), target);
  g.q = qo;
  g.k_new = ko;
  g.v_new = vo;
  ops::set_mins_to_zero(g.q, g.k_new, g.v_new);
  return {qo, ko, vo};
}

class QkvRopeGenerator : public Halide::Generator<QkvRopeGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};  // (D, T)
  Input<Halide::Buffer<void, 2>> w{"w"};  // (D, (Hq + 2·Hkv)·Dh)
  Input<int32_t> heads{"heads"};
  Input<int32_t> head_dim{"head_dim"};
  Input<int32_t> kv_heads{"kv_heads"};
  Input<int32_t> pos{"pos"};
  Input<double> theta{"theta"};
  Input<bool> interleaved{"interleaved"};  // RoPE pairs (2i, 2i+1); else (i, i + Dh/2)
  Output<Halide::Buffer<float, 3>> q{"q"};      // (Dh, Hq, T), rotated
  // (Dh, T, Hkv): views of the caches at positions pos ... pos+T−1 (strided: S_max·Dh
  // between kv heads), so the new rows are stored in place.
  Output<Halide::Buffer<void, 3>> k_new{"k_new"};
  Output<Halide::Buffer<void, 3>> v_new{"v_new"};

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(x, w);
    Expr D = x.dim(0).extent();
    Var c, r, t;
    Func xf("xf"), wf("wf");
    xf(c, t) = ops::widen_to_f32(x(c, t), target);
    wf(c, r) = ops::widen_to_f32(w(c, r), target);
    const bool gpu = target.has_gpu_feature();
    const int lanes = gpu ? schedules::gpu::linear_lanes(target) : schedules::cpu::linear_lanes(target);
    ops::QkvRope a = ops::define_qkv_rope(xf, wf, D, heads, kv_heads, head_dim, pos, theta, interleaved, lanes);
    auto [qo, ko, vo] = bind_rope_outputs(*this, a, target);
    if (gpu) {
      schedules::gpu::schedule_qkv_rope(a, qo, ko, vo, w.dim(1).extent(), target);
    } else {
      schedules::cpu::schedule_qkv_rope(a, qo, ko, vo, w.dim(1).extent(), target);
    }
  }
};

// The int8-weight QKV step: the int32 accumulators of x_q · w_qkvᵀ (runtime/int8_gemm.h)
// dequantized with the token's and the channel's scales (ops/per_token_quant.h), then the
// same RoPE and cache stores as QkvRopeGenerator.
class QkvRopeDequantGenerator : public Halide::Generator<QkvRopeDequantGenerator> {
 public:
  Input<Halide::Buffer<int32_t, 2>> acc{"acc"};        // ((Hq + 2·Hkv)·Dh, T)
  Input<Halide::Buffer<float, 1>> x_scale{"x_scale"};  // (T): per-token scales of x
  Input<Halide::Buffer<float, 1>> w_scale{"w_scale"};  // ((Hq + 2·Hkv)·Dh): per channel
  Input<int32_t> heads{"heads"};
  Input<int32_t> head_dim{"head_dim"};
  Input<int32_t> kv_heads{"kv_heads"};
  Input<int32_t> pos{"pos"};
  Input<double> theta{"theta"};
  Input<bool> interleaved{"interleaved"};
  Output<Halide::Buffer<float, 3>> q{"q"};
  Output<Halide::Buffer<void, 3>> k_new{"k_new"};
  Output<Halide::Buffer<void, 3>> v_new{"v_new"};

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(acc, x_scale, w_scale);
    Var r, t;
    Func rows("dequantized_rows");
    rows(r, t) = ops::dequantize(acc(r, t), x_scale(t), w_scale(r));
    ops::QkvRope a = ops::define_qkv_rope_of_rows(rows, heads, kv_heads, head_dim, pos, theta, interleaved);
    auto [qo, ko, vo] = bind_rope_outputs(*this, a, target);
    if (target.has_gpu_feature()) {
      schedules::gpu::schedule_qkv_rope_of_rows(a, qo, ko, vo, target);
    } else {
      schedules::cpu::schedule_qkv_rope_of_rows(a, qo, ko, vo, target);
    }
  }
};

class LinearGenerator : public Halide::Generator<LinearGenerator> {
 public:
  Input<Halide::Buffer<void, 2>> x{"x"};   // (K, T)
  Input<Halide::Buffer<void, 2>> w{"w"};   // (K, N)
  Output<Halide::Buffer<void, 2>> y{"y"};  // (N, T)

  void generate() {
    using namespace Halide;
    const Target target = get_target();
    ops::add_f16c_bitcode(*get_externs_map(), target);
    ops::set_mins_to_zero(x, w);
    Var c, r, t;
    Func xf("xf"), wf("wf");
    xf(c, t) = ops::widen_to_f32(x(c, t), target);
    wf(c, r) = ops::widen_to_f32(w(c, r), target);
    const bool gpu = target.has_gpu_feature();
    const int lanes = gpu ? schedules::gpu::linear_lanes(target) : schedules::cpu::linear_lanes(target);
    ops::Linear lin = ops::define_linear(xf, wf, x.dim(0).extent(), lanes);
    Func out("linear_out");
    out(lin.n, lin.t) = ops::narrow_from_f32(lin.out(lin.n, lin.t), y.type(), target);
    y = out;
    ops::set_mins_to_zero(y);
    if (gpu) {
      schedules::gpu::schedule_linear(lin, out, w.dim(1).extent(), target);
    } else {
      schedules::cpu::schedule_linear(lin, out, w.dim(1).extent(), target);
    }
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::QkvRopeGenerator, npukit_qkv_rope)
HALIDE_REGISTER_GENERATOR(npukit::LinearGenerator, npukit_linear)
HALIDE_REGISTER_GENERATOR(npukit::QkvRopeDequantGenerator, npukit_qkv_rope_dequant)
