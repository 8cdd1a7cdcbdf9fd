#include "schedules/npu/attention.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "ops/attention.h"
#include "ops/float_convert.h"
#include "runtime/error.h"
#include "simulator/rules/footprint.h"
#include "schedules/npu/jit_run.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

constexpr int kHeadBlock = ops::AttentionDecode::kHeadBlock;

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

}  // namespace

bool attention_on_matrix(const sim::ArchSpec& arch, int64_t element_bytes) {
  const sim::MatrixUnit& u = arch.matrix;
  if (element_bytes != 2 || u.kind != sim::MatrixKind::cube || !u.supports(sim::Dtype::fp16)) return false;
  auto shape = u.shapes.find(sim::Dtype::fp16);
  if (shape == u.shapes.end() || kHeadBlock % shape->second.n0 != 0) return false;  // N = the head block
  // The scores leave the matrix unit for the softmax on the vector unit, and the weights
  // come back to it for p·v: both buffers must be readable by both units.
  const sim::Buffer* acc = arch.find_buffer(arch.roles.matrix_acc);
  const sim::Buffer* vb = arch.find_buffer(arch.roles.vector);
  return acc && vb && acc->read_by(sim::Unit::vector) && vb->read_by(sim::Unit::matrix);
}

int attention_softmax_lanes(const sim::ArchSpec& arch) {
  const sim::Buffer* vb = arch.find_buffer(arch.roles.vector);
  const int64_t align = vb ? vb->alignment : 16;
  return static_cast<int>(std::max<int64_t>(kHeadBlock, round_up(align / 4, kHeadBlock)));
}

namespace {

// Bytes per buffer of one task's allocations, as the schedule below makes them.
bool blocks_fit(const sim::ArchSpec& arch, int64_t eb, int64_t heads, int64_t kv_heads, int64_t head_dim,
                bool on_matrix, int block, int split, bool db) {
  const sim::BufferRoles& r = arch.roles;
  const std::string& vb = r.vector;
  const std::string qa = on_matrix ? r.matrix_a : vb, kb = on_matrix ? r.matrix_b : vb, acc = on_matrix ? r.matrix_acc : vb;
  const int64_t lanes = attention_softmax_lanes(arch);
  const int64_t group = round_up(heads / std::max<int64_t>(1, kv_heads), kHeadBlock);
  const int64_t row = on_matrix ? head_dim * eb : round_up(head_dim, lanes) * eb;
  const int64_t q_rows = heads / std::max<int64_t>(1, kv_heads);
  return sim::fits_buffers(arch, {{qa, q_rows * row, db},
                                  {kb, int64_t(block) * row, db},                   // K block
                                  {kb, int64_t(block) * row, db},                   // V block
                                  {acc, int64_t(split) * group * 4, false},         // scores
                                  {vb, int64_t(split) * group * 4, false},          // weights
                                  {acc, round_up(head_dim, lanes) * group * 4, false},  // Σ weight · v
                                  {vb, int64_t(split) * 4, db}});                   // the mask's row, when masked
}

}  // namespace

AttentionBlocks choose_attention_blocks(const sim::ArchSpec& arch, int64_t eb, int64_t s_max, int64_t heads,
                                        int64_t kv_heads, int64_t head_dim, bool on_matrix) {
  const int64_t cores = std::max<int64_t>(1, arch.cores);
  for (bool db : {true, false}) {
    for (int block : {256, 128, 64, 32, 16}) {
      if (block > 16 && block / 2 >= s_max) continue;  // no larger than the cache needs
      // Among splits of 1 … 32 blocks that fit, the one that gives the busiest core the
      // fewest positions; ties go to the larger split (fewer partials to combine).
      AttentionBlocks best{block, 0, db};
      int64_t best_positions = INT64_MAX;
      for (int m : {32, 16, 8, 4, 2, 1}) {
        const int split = block * m;
        if (!blocks_fit(arch, eb, heads, kv_heads, head_dim, on_matrix, block, split, db)) continue;
        const int64_t tasks = (s_max + split - 1) / split * kv_heads;
        const int64_t per_core = (tasks + cores - 1) / cores * std::min<int64_t>(split, s_max);
        if (per_core < best_positions) best_positions = per_core, best.split = split;
      }
      if (best.split > 0) return best;
    }
  }
  return AttentionBlocks{16, 16, false};  // nothing fits; the capacity rule says by how much
}

NpuPipeline attention_decode_npu_pipeline(const sim::ArchSpec& arch, Type type, bool masked, bool on_matrix,
                                          const AttentionBlocks& blocks) {
  NpuPipeline p;
  p.op = "attention";
  ImageParam q(type, 3, "q"), k(type, 3, "k_cache"), v(type, 3, "v_cache");  // (d, h, t), (d, s, g)
  ImageParam mask(Float(32), 2, "mask");                                      // (s, t)
  Param<int32_t> position("position");
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  Var d("d"), h("h"), t("t"), s("s"), g("g");
  Func q_tile("q_tile"), k_tile("k_tile"), v_tile("v_tile"), mask_tile("mask_tile");
  Func qf("qf"), kf("kf"), vf("vf"), mf("mf");
  q_tile(d, h) = q(d, h, 0);
  k_tile(d, s, g) = k(d, s, g);
  v_tile(d, s, g) = v(d, s, g);
  qf(d, h) = ops::widen_to_f32(q_tile(d, h), portable);
  kf(d, s, g) = ops::widen_to_f32(k_tile(d, s, g), portable);
  vf(d, s, g) = ops::widen_to_f32(v_tile(d, s, g), portable);
  if (masked) {
    mask_tile(s) = mask(s, 0);
    mf(s) = mask_tile(s);
  } else {
    mf(s) = 0.0f;  // never read: the unmasked algorithm does not touch the mask
  }
  const int lanes = attention_softmax_lanes(arch);
  const int positions_per_vector = lanes / kHeadBlock;
  ops::AttentionDecode a =
      ops::define_attention_decode(qf, kf, vf, position, mf, q.dim(1).extent(), k.dim(2).extent(), q.dim(0).extent(),
                                   k.dim(1).extent(), blocks.split, positions_per_vector, blocks.block, masked);
  Func y("attention_npu");
  y(d, h, t) = ops::narrow_from_f32(a.out(d, h), type, portable);
  p.inputs = {q, k, v};
  if (masked) p.inputs.push_back(mask);
  p.ints = {position};

  const sim::BufferRoles& roles = arch.roles;
  const std::string& vb = roles.vector;
  const std::string qa = on_matrix ? roles.matrix_a : vb, kb = on_matrix ? roles.matrix_b : vb,
                    acc = on_matrix ? roles.matrix_acc : vb;
  const bool db = blocks.double_buffer;
  const TailStrategy guard = TailStrategy::GuardWithIf;

  // One task per (split, kv head), dealt to the cores. Its partial goes to DRAM (an
  // unplaced Func): the combine needs every split's.
  Var task("task");
  a.partial.compute_root().bound(a.ri, 0, kHeadBlock).reorder(a.d, a.ri, a.ro, a.c, a.g).fuse(a.c, a.g, task).parallel(task);
  const LoopLevel at(a.partial, task);
  p.plan.stage(q_tile, qa, at, db, true);
  if (masked) p.plan.stage(mask_tile, vb, at, db, true);
  // Rows start at 0: saying so lets Halide prove the rows' vector accesses aligned (with
  // a symbolic row start it proves nothing, and the rules would see misalignment).
  Expr head_dim = q.dim(0).extent();
  q_tile.bound(d, 0, head_dim);
  if (!on_matrix) q_tile.align_storage(d, lanes).vectorize(d, lanes, guard);

  // Scores q·kᵀ of the split, heads innermost: K streams in blocks of `block` positions.
  Var sb("sb"), si("si");
  p.plan.stage(a.dot, acc, at);
  a.dot.align_bounds(a.s, blocks.block).reorder_storage(a.ri, a.s, a.ro, a.g);
  if (on_matrix) {
    // M = positions, K = head_dim, N = the head block (vectorized): scoresᵀ = K · qᵀ.
    a.dot.update()
        .split(a.s, sb, si, blocks.block, TailStrategy::RoundUp)
        .reorder(a.ri, a.rd.x, si, sb, a.ro)
        .vectorize(a.ri);
    p.plan.stage(k_tile, kb, LoopLevel(a.dot, sb), db, true);
    p.plan.matrix(a.dot, 1, si.name(), a.ri.name(), a.rd.x.name(), sim::Dtype::fp16);
  } else {
    // Vectors along head_dim (both k and q rows are dense there), then a sum of the lanes.
    RVar rdo("rdo"), rdi("rdi");
    Var u("u");
    Func dot_lanes = a.dot.update().split(a.rd.x, rdo, rdi, lanes).rfactor(rdi, u);
    a.dot.update().split(a.s, sb, si, blocks.block, TailStrategy::RoundUp).reorder(rdi, a.ri, si, sb, a.ro);
    dot_lanes.compute_at(a.dot, sb).reorder_storage(u, a.ri, a.s, a.ro, a.g).vectorize(u);
    dot_lanes.update().reorder(u, rdo, a.ri, a.s).vectorize(u);
    p.plan.stage(k_tile, kb, LoopLevel(a.dot, sb), db, true);
    k_tile.bound(d, 0, head_dim).align_storage(d, lanes).vectorize(d, lanes, guard);
  }

  // The split's max and flags, and Σ weight: a few values per head, in registers; their
  // vectors span the head block and positions_per_vector positions of dense scores.
  Var j("j");
  a.stats.compute_at(at).vectorize(a.ri);
  Func stats_lanes = a.stats.update().rfactor(a.rs_all.x, j);
  a.stats.update().reorder(a.ri, a.rs_all.x, a.ro).vectorize(a.ri);
  stats_lanes.compute_at(at).reorder_storage(a.ri, j, a.ro, a.c, a.g).vectorize(a.ri).vectorize(j);
  stats_lanes.update().reorder(a.ri, j, a.rs_all.y, a.ro).vectorize(a.ri).vectorize(j);
  Var so("so"), sv("sv");
  p.plan.stage(a.weight, vb, at);
  a.weight.align_bounds(a.s, positions_per_vector).reorder_storage(a.ri, a.s, a.ro, a.c, a.g);
  if (positions_per_vector > 1) {
    a.weight.split(a.s, so, sv, positions_per_vector, TailStrategy::RoundUp)
        .reorder(a.ri, sv, so, a.ro)
        .vectorize(a.ri)
        .vectorize(sv);
  } else {
    a.weight.reorder(a.ri, a.s, a.ro).vectorize(a.ri);
  }
  a.den.compute_at(at).vectorize(a.ri);
  Func den_lanes = a.den.update().rfactor(a.rb.x, j);
  a.den.update().reorder(a.ri, a.rb.x, a.ro).vectorize(a.ri);
  den_lanes.compute_at(at).reorder_storage(a.ri, j, a.ro, a.c, a.g).vectorize(a.ri).vectorize(j);
  den_lanes.update().reorder(a.ri, j, a.rb.y, a.ro).vectorize(a.ri).vectorize(j);

  // Σ weight · v, the output accumulator: V streams in blocks of `block` positions.
  p.plan.stage(a.num, acc, at);
  if (on_matrix) {
    // M = head_dim, K = positions, N = the head block (vectorized): (p·v)ᵀ = Vᵀ · pᵀ.
    a.num.update().reorder(a.ri, a.d, a.rv.x, a.rv.y, a.ro).vectorize(a.ri);
    p.plan.matrix(a.num, 1, a.d.name(), a.ri.name(), a.rv.x.name(), sim::Dtype::fp16);
  } else {
    a.num.bound(a.d, 0, head_dim).align_storage(a.d, lanes).vectorize(a.d, lanes, guard);
    a.num.update().reorder(a.d, a.ri, a.rv.x, a.rv.y, a.ro).vectorize(a.d, lanes, guard);
    v_tile.bound(d, 0, head_dim).align_storage(d, lanes).vectorize(d, lanes, guard);
  }
  p.plan.stage(v_tile, kb, LoopLevel(a.num, a.rv.y), db, true);

  // The exact combine over the splits up to the position, once, then the output.
  a.combined.compute_root();
  a.scale.compute_root();
  a.total_den.compute_root();
  a.total_num.compute_root();
  p.finish({y}, {"o"});
  return p;
}

namespace {

// Row `t` of a [T, …] tensor as a [1, …] tensor.
TensorView row_of(const TensorView& v, int64_t t) {
  TensorView r = v;
  int64_t elements = 1;
  for (size_t i = 1; i < v.shape.size(); ++i) elements *= v.shape[i];
  r.data = static_cast<char*>(v.data) + t * elements * static_cast<int64_t>(dtype_size(v.dtype));
  r.shape[0] = 1;
  return r;
}

}  // namespace

void attention_npu_sim(const Call& call) {
  const sim::ArchSpec arch = call_arch(call);
  const TensorView& q = call.tensor("q");
  const bool f16 = q.dtype == DType::float16;
  const bool masked = call.tensors.count("mask") > 0;
  const int64_t eb = f16 ? 2 : 4;
  const int64_t T = call.dim("T"), heads = call.dim("Hq"), kv_heads = call.dim("Hkv"), s_max = call.dim("S_max"),
                head_dim = call.dim("Dh");
  const bool on_matrix = attention_on_matrix(arch, eb);
  const AttentionBlocks b = choose_attention_blocks(arch, eb, s_max, heads, kv_heads, head_dim, on_matrix);
  const std::string key = std::string("attention|decode|") + (f16 ? "f16" : "f32") + (masked ? "|masked|" : "|unmasked|") +
                          (on_matrix ? "matrix|" : "vector|") + arch.roles.matrix_a + "," + arch.roles.matrix_b + "," +
                          arch.roles.matrix_acc + "," + arch.roles.vector + "|" +
                          std::to_string(attention_softmax_lanes(arch)) + "|" + std::to_string(b.block) + "|" +
                          std::to_string(b.split) + (b.double_buffer ? "|db" : "|sb");
  auto p = cached_pipeline(key, [&] {
    return attention_decode_npu_pipeline(arch, f16 ? Float(16) : Float(32), masked, on_matrix, b);
  });
  // Prefill runs as T decode steps, one per query token (its position and mask row):
  // correct, but it reads the cache T times; a prefill schedule would tile the queries.
  const auto* positions = static_cast<const int32_t*>(call.tensor("positions").data);
  for (int64_t t = 0; t < T; ++t) {
    JitArgs args;
    args.inputs = {{"q", row_of(q, t)}, {"k_cache", call.tensor("k_cache")}, {"v_cache", call.tensor("v_cache")}};
    if (masked) args.inputs["mask"] = row_of(call.tensor("mask"), t);
    args.ints = {{"position", positions[t]}};
    jit_realize(*p, args, call, {{"o", row_of(call.tensor("o"), t)}});
  }
}

}  // namespace npukit::schedules::npu
