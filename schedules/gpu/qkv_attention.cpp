#include "schedules/gpu/qkv_attention.h"

namespace npukit::schedules::gpu {

using namespace Halide;

namespace {
constexpr int kLanes = 32;     // threads per row (a warp)
constexpr int kRows = 8;       // rows per block: 256 threads
constexpr int kColumns = 32;   // threads per block of an elementwise stage
const TailStrategy kGuard = TailStrategy::GuardWithIf;

// One thread per element along dim 0 (coalesced), blocks over the rest.
void elementwise(Stage s, Var x, Var y, Var z) {
  Var xo("xo"), xi("xi");
  s.split(x, xo, xi, kColumns, kGuard).reorder(xi, xo, y, z).gpu_blocks(xo, y, z).gpu_threads(xi);
}
}  // namespace

int linear_lanes(const Target& target) {
  (void)target;
  return kLanes;
}

void schedule_linear(ops::Linear& lin, Func wrapper, Expr n_rows, const Target& target) {
  (void)target;
  Var n = wrapper.args()[0], t = wrapper.args()[1], no("no"), ni("ni");
  // ShiftInwards keeps every block exactly kRows rows inside the weights (the last block
  // overlaps its neighbour and recomputes a few outputs), so no row past N is read.
  wrapper.compute_root();
  wrapper.specialize(n_rows >= kRows)
      .split(n, no, ni, kRows, TailStrategy::ShiftInwards)
      .reorder(ni, no, t)
      .gpu_blocks(no, t)
      .gpu_threads(ni);
  wrapper.split(n, no, ni, 1).reorder(ni, no, t).gpu_blocks(no, t).gpu_threads(ni);
  lin.out.compute_at(wrapper, no).gpu_threads(lin.n);
  lin.out.update(0).gpu_threads(lin.n);
  lin.out.update(1).gpu_threads(lin.n);
  lin.part.compute_at(wrapper, no).gpu_threads(lin.l, lin.n);
  lin.part.update().reorder(lin.rk, lin.l, lin.n).gpu_threads(lin.l, lin.n);
}

void schedule_qkv_rope(ops::QkvRope& a, Func q, Func k_new, Func v_new, Expr qkv_rows, const Target& target) {
  schedule_linear(a.proj.tokens, a.rows, qkv_rows, target);
  schedule_rope_outputs(a, q, k_new, v_new, target);
}

void schedule_qkv_rope_of_rows(ops::QkvRope& a, Func q, Func k_new, Func v_new, const Target& target) {
  Var r = a.rows.args()[0], t = a.rows.args()[1], ro("ro"), ri("ri");
  a.rows.compute_root().split(r, ro, ri, kColumns * kRows, kGuard).gpu_blocks(ro, t).gpu_threads(ri);
  schedule_rope_outputs(a, q, k_new, v_new, target);
}

void schedule_rope_outputs(ops::QkvRope& a, Func q, Func k_new, Func v_new, const Target& target) {
  // The table on the host, vectorized as on the CPU: Dh/2 · T values, and the same fp64
  // code as the CPU kernels (no device fp64 needed).
  const int vec = target.natural_vector_size<float>();
  a.angles.inv_freq.compute_root().vectorize(a.angles.i, vec, kGuard);
  a.angles.cos_sin.compute_root().vectorize(a.angles.i, vec, kGuard);
  for (ops::Rope* r : {&a.q_half, &a.k_half, &a.q_interleaved, &a.k_interleaved}) {
    r->out.compute_root();
    elementwise(r->out, r->d, r->h, r->t);
  }
  // The half style's two updates: one thread per pair (each writes its own element).
  for (ops::Rope* r : {&a.q_half, &a.k_half}) {
    for (int u = 0; u < 2; ++u) {
      RVar ro("ro"), ri("ri");
      r->out.update(u).split(r->r.x, ro, ri, kColumns, kGuard).reorder(ri, ro, r->h, r->t).gpu_blocks(ro, r->h, r->t).gpu_threads(ri);
    }
  }
  for (Func f : {q, k_new, v_new}) elementwise(f, f.args()[0], f.args()[1], f.args()[2]);
}

}  // namespace npukit::schedules::gpu
