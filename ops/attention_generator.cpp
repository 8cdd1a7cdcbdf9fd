// The attention-core Generator (op `attention`): storage types from `q.type`, `k.type`,
// `v.type` and `o.type`.
#include "Halide.h"
#include "ops/attention.h"
#include "ops/float_convert.h"

namespace npukit {
namespace {

class AttentionGenerator : public Halide::Generator<AttentionGenerator> {
 public:
  Input<Halide::Buffer<void, 3>> q{"q"};              // (Dh, Hq, T)
  Input<Halide::Buffer<void, 3>> k{"k"};              // (Dh, S_max, Hkv)
  Input<Halide::Buffer<void, 3>> v{"v"};              // (Dh, S_max, Hkv)
  Input<Halide::Buffer<int32_t, 1>> positions{"positions"};
  Input<Halide::Buffer<float, 2>> mask{"mask"};       // (S_max, T)
  Output<Halide::Buffer<void, 3>> o{"o"};             // (Dh, Hq, T)

  void generate() {
    using namespace Halide;
    ops::add_f16c_bitcode(*get_externs_map(), get_target());
    const Target target = get_target();
    Var a, b, c;
    Func qf("qf"), kf("kf"), vf("vf");
    qf(a, b, c) = ops::widen_to_f32(q(a, b, c), target);
    kf(a, b, c) = ops::widen_to_f32(k(a, b, c), target);
    vf(a, b, c) = ops::widen_to_f32(v(a, b, c), target);
    ops::Attention att = ops::define_attention(qf, kf, vf, positions, mask, q.dim(1).extent(), k.dim(2).extent(),
                                               q.dim(0).extent(), k.dim(1).extent());
    Func out("attention_out");
    out(att.d, att.h, att.t) = ops::narrow_from_f32(att.out(att.d, att.h, att.t), o.type(), target);
    o = out;

    // One (head, token) per task: its scores in L1/L2, the max, the exp sums.
    const int vec = target.natural_vector_size<float>();
    Var ht("ht");
    out.fuse(att.h, att.t, ht).parallel(ht);
    out.vectorize(att.d, vec, TailStrategy::GuardWithIf);
    // Each score is a dot product along the contiguous head_dim: vectors over d, then a
    // horizontal sum (vectors over s would gather k with a stride of head_dim).
    att.score.compute_at(out, ht);
    att.dot.compute_at(att.score, att.s);
    att.dot.update().atomic().vectorize(att.rd, vec, TailStrategy::GuardWithIf);
    att.stats.compute_at(out, ht);
    att.weight.compute_at(out, ht).vectorize(att.s, vec, TailStrategy::GuardWithIf);
    att.den.compute_at(out, ht);
    att.num.compute_at(out, ht).vectorize(att.d, vec, TailStrategy::GuardWithIf);
    att.num.update().vectorize(att.d, vec, TailStrategy::GuardWithIf);
  }
};

}  // namespace
}  // namespace npukit

HALIDE_REGISTER_GENERATOR(npukit::AttentionGenerator, npukit_attention)
