#include "schedules/npu/attention.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "ops/attention.h"
#include "ops/float_convert.h"
#include "runtime/error.h"
#include "simulator/rules/footprint.h"
#include "schedules/npu/npu_schedule.h"

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

// Bytes per buffer of one task's allocations, as the schedules below make them: a task
// holds `tokens` query tokens (1 for decode) of the group's heads.
bool blocks_fit(const sim::ArchSpec& arch, int64_t eb, int64_t q_eb, int64_t heads, int64_t kv_heads,
                int64_t head_dim, bool on_matrix, int block, int split, int64_t tokens, bool prefill, bool db) {
  const sim::BufferRoles& r = arch.roles;
  const std::string& vb = r.vector;
  const std::string qa = on_matrix ? r.matrix_a : vb, kb = on_matrix ? r.matrix_b : vb, acc = on_matrix ? r.matrix_acc : vb;
  const int64_t lanes = attention_softmax_lanes(arch);
  const int64_t group = round_up(heads / std::max<int64_t>(1, kv_heads), kHeadBlock) * tokens;
  const int64_t row_elements = on_matrix ? head_dim : round_up(head_dim, lanes), row = row_elements * eb;
  const int64_t q_rows = heads / std::max<int64_t>(1, kv_heads) * tokens;
  std::vector<sim::PlannedAllocation> a = {{qa, q_rows * row_elements * q_eb, db},
                                           {kb, int64_t(block) * row, db},                   // K block
                                           {kb, int64_t(block) * row, db},                   // V block
                                           {acc, int64_t(split) * group * 4, false},         // scores
                                           {vb, int64_t(split) * group * 4, false},          // weights
                                           {acc, round_up(head_dim, lanes) * group * 4, false},  // Σ weight · v
                                           {vb, int64_t(split) * 4 * tokens, db}};           // the mask's rows, when masked
  // A token's v, zeroed past its position, beside the shared V block (prefill).
  if (prefill) a.push_back({kb, int64_t(block) * round_up(head_dim, lanes) * 4, false});
  return sim::fits_buffers(arch, a);
}

}  // namespace

AttentionBlocks choose_attention_blocks(const sim::ArchSpec& arch, int64_t eb, int64_t T, int64_t s_max, int64_t heads,
                                        int64_t kv_heads, int64_t head_dim, bool on_matrix, int64_t q_eb) {
  if (q_eb == 0) q_eb = eb;
  const int64_t cores = std::max<int64_t>(1, arch.cores);
  // Prefill: the most query tokens per task (each k and v row is read once per tile of
  // them) that leave room for blocks of 64 positions, or fewer if that does not fit.
  const int64_t max_tokens = T == 1 ? 1 : std::min<int64_t>(T, 64);
  for (bool db : {true, false}) {
    for (int64_t tokens = max_tokens; tokens >= 1; tokens = tokens == 1 ? 0 : (tokens + 1) / 2) {
      for (int block : {256, 128, 64, 32, 16}) {
        if (block > 16 && block / 2 >= s_max) continue;  // no larger than the cache needs
        if (tokens > 2 && block < 64) break;  // fewer tokens before smaller blocks
        // Among splits of 1 … 32 blocks that fit, the one that gives the busiest core the
        // fewest positions; ties go to the larger split (fewer partials to combine).
        AttentionBlocks best{block, 0, db, static_cast<int>(tokens)};
        int64_t best_positions = INT64_MAX;
        for (int m : {32, 16, 8, 4, 2, 1}) {
          const int split = block * m;
          if (!blocks_fit(arch, eb, q_eb, heads, kv_heads, head_dim, on_matrix, block, split, tokens, T > 1, db))
            continue;
          const int64_t tasks = (s_max + split - 1) / split * kv_heads * ((T + tokens - 1) / tokens);
          const int64_t per_core = (tasks + cores - 1) / cores * std::min<int64_t>(split, s_max);
          if (per_core < best_positions) best_positions = per_core, best.split = split;
        }
        if (best.split > 0) return best;
      }
    }
  }
  return AttentionBlocks{16, 16, false, 1};  // nothing fits; the capacity rule says by how much
}

NpuPipeline attention_npu_pipeline(const sim::ArchSpec& arch, Type type, bool masked, bool on_matrix,
                                   bool double_buffer, bool prefill, bool qo_float32) {
  NpuPipeline p;
  p.op = "attention";
  const Type qo = qo_float32 ? Float(32) : type;
  ImageParam q(qo, 3, "q"), k(type, 3, "k_cache"), v(type, 3, "v_cache");  // (d, h, t), (d, s, g)
  ImageParam mask(Float(32), 2, "mask");                                      // (s, t)
  ImageParam positions(Int(32), 1, "positions");                             // (t), prefill
  Param<int32_t> position(prefill ? "max_position" : "position");
  // The knobs, scalars of one lowering (AttentionBlocks): a split is split_blocks blocks.
  Param<int32_t> block("block"), split_blocks("split_blocks"), tokens("tokens");
  const Expr split = block * split_blocks;
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  Var d("d"), h("h"), t("t"), s("s"), g("g");
  Func q_tile("q_tile"), k_tile("k_tile"), v_tile("v_tile"), mask_tile("mask_tile");
  Func qf("qf"), kf("kf"), vf("vf"), mf("mf"), pos("pos");
  // Decode reads row 0 of q and of the mask; a prefill task its tokens' rows.
  const std::vector<Var> qv = prefill ? std::vector<Var>{d, h, t} : std::vector<Var>{d, h};
  const std::vector<Var> mv = prefill ? std::vector<Var>{s, t} : std::vector<Var>{s};
  q_tile(qv) = q(d, h, prefill ? Expr(t) : Expr(0));
  k_tile(d, s, g) = k(d, s, g);
  v_tile(d, s, g) = v(d, s, g);
  qf(qv) = ops::widen_to_f32(q_tile(qv), portable);
  kf(d, s, g) = ops::widen_to_f32(k_tile(d, s, g), portable);
  vf(d, s, g) = ops::widen_to_f32(v_tile(d, s, g), portable);
  if (masked) {
    mask_tile(mv) = mask(s, prefill ? Expr(t) : Expr(0));
    mf(mv) = mask_tile(mv);
  } else {
    mf(mv) = 0.0f;  // never read: the unmasked algorithm does not touch the mask
  }
  pos(t) = positions(t);  // read by the core's scalar unit, 4 B per token
  const int lanes = attention_softmax_lanes(arch);
  const int positions_per_vector = lanes / kHeadBlock;
  Expr heads = q.dim(1).extent(), kv_heads = k.dim(2).extent(), head_dim = q.dim(0).extent(),
       s_max = k.dim(1).extent();
  ops::AttentionDecode a =
      prefill ? ops::define_attention_split_tokens(qf, kf, vf, pos, position, mf, heads, kv_heads, head_dim, s_max,
                                                   split, positions_per_vector, block, masked)
              : ops::define_attention_decode(qf, kf, vf, position, mf, heads, kv_heads, head_dim, s_max, split,
                                             positions_per_vector, block, masked);
  Func y("attention_npu");
  y(d, h, t) = ops::narrow_from_f32(prefill ? a.out(d, h, t) : a.out(d, h), qo, portable);
  p.inputs = {q, k, v};
  if (prefill) p.inputs.push_back(positions);
  if (masked) p.inputs.push_back(mask);
  p.ints = {position, block, split_blocks};
  if (prefill) p.ints.push_back(tokens);

  const sim::BufferRoles& roles = arch.roles;
  const std::string& vb = roles.vector;
  const std::string qa = on_matrix ? roles.matrix_a : vb, kb = on_matrix ? roles.matrix_b : vb,
                    acc = on_matrix ? roles.matrix_acc : vb;
  const bool db = double_buffer;
  const TailStrategy guard = TailStrategy::GuardWithIf;
  // Loop and storage orders: the prefill's token t sits where `tok` puts it.
  auto with_t = [&](std::vector<VarOrRVar> inner, std::vector<VarOrRVar> outer) {
    if (prefill) inner.push_back(a.t);
    inner.insert(inner.end(), outer.begin(), outer.end());
    return inner;
  };
  auto storage = [&](std::vector<Var> inner, std::vector<Var> outer) {
    if (prefill) inner.push_back(a.t);
    inner.insert(inner.end(), outer.begin(), outer.end());
    return inner;
  };

  // One task per (split, kv head) — and per tile of `tokens` query tokens in a prefill —,
  // dealt to the cores. Its partial goes to DRAM (an unplaced Func): the combine needs
  // every split's.
  Var task("task"), tt("tt"), ti("ti"), tc("tc");
  a.partial.compute_root().bound(a.ri, 0, kHeadBlock);
  if (prefill) {
    // The last tile shifts inwards (recomputing a few tokens): a guard's likely() would
    // make Halide partition every t loop of the task into siblings.
    a.partial.split(a.t, tt, ti, min(tokens, q.dim(2).extent()), TailStrategy::ShiftInwards)
        .reorder(a.d, a.ri, a.ro, ti, tt, a.c, a.g)
        .fuse(tt, a.c, tc)
        .fuse(tc, a.g, task)
        .parallel(task);
  } else {
    a.partial.reorder(a.d, a.ri, a.ro, a.c, a.g).fuse(a.c, a.g, task).parallel(task);
  }
  // In vectors: the loop over whole vectors of d then copies num (the algorithm's likely()),
  // and only the last vector selects the split's scalars.
  a.partial.vectorize(a.d, lanes, guard);
  const LoopLevel at(a.partial, task);
  p.plan.stage(q_tile, qa, at, db, true);
  if (masked) p.plan.stage(mask_tile, vb, at, db, true);
  // Rows start at 0: saying so lets Halide prove the rows' vector accesses aligned (with
  // a symbolic row start it proves nothing, and the rules would see misalignment).
  q_tile.bound(d, 0, head_dim);
  if (!on_matrix) q_tile.align_storage(d, lanes).vectorize(d, lanes, guard);

  // Scores q·kᵀ of the split, heads innermost: K streams in blocks of `block` positions,
  // each block shared by the task's tokens.
  Var sb("sb"), si("si");
  p.plan.stage(a.dot, acc, at);
  a.dot.align_bounds(a.s, block).reorder_storage(storage({a.ri, a.s, a.ro}, {a.g}));
  if (on_matrix) {
    // M = positions, K = head_dim, N = the head block (vectorized): scoresᵀ = K · qᵀ.
    a.dot.update()
        .split(a.s, sb, si, block, TailStrategy::RoundUp)
        .reorder(prefill ? std::vector<VarOrRVar>{a.ri, a.rd.x, si, a.ro, a.t, sb}
                         : std::vector<VarOrRVar>{a.ri, a.rd.x, si, sb, a.ro})
        .vectorize(a.ri);
    p.plan.stage(k_tile, kb, LoopLevel(a.dot, sb), db, true);
    p.plan.matrix(a.dot, 1, si.name(), a.ri.name(), a.rd.x.name(), sim::Dtype::fp16);
  } else {
    // Vectors along head_dim (both k and q rows are dense there), then a sum of the lanes.
    RVar rdo("rdo"), rdi("rdi");
    Var u("u");
    Func dot_lanes = a.dot.update().split(a.rd.x, rdo, rdi, lanes).rfactor(rdi, u);
    a.dot.update()
        .split(a.s, sb, si, block, TailStrategy::RoundUp)
        .reorder(prefill ? std::vector<VarOrRVar>{rdi, a.ri, si, a.ro, a.t, sb}
                         : std::vector<VarOrRVar>{rdi, a.ri, si, sb, a.ro});
    // The lanes per position (a block's would take lanes × 4 heads × block × 4 B of the
    // vector buffer, which the chooser would have to leave room for).
    dot_lanes.compute_at(LoopLevel(a.dot, si))
        .reorder_storage(storage({u, a.ri, a.s, a.ro}, {a.g}))
        .vectorize(u);
    dot_lanes.update().reorder(u, rdo, a.ri, a.s).vectorize(u);
    p.plan.stage(k_tile, kb, LoopLevel(a.dot, sb), db, true);
    k_tile.bound(d, 0, head_dim).align_storage(d, lanes).vectorize(d, lanes, guard);
  }

  // The split's max and flags, and Σ weight: a few values per head, in registers; their
  // vectors span the head block and positions_per_vector positions of dense scores.
  Var j("j");
  a.stats.compute_at(at).vectorize(a.ri);
  Func stats_lanes = a.stats.update().rfactor(a.rs_all.x, j);
  a.stats.update().reorder(with_t({a.ri, a.rs_all.x, a.ro}, {})).vectorize(a.ri);
  stats_lanes.compute_at(at).reorder_storage(storage({a.ri, j, a.ro}, {a.c, a.g})).vectorize(a.ri).vectorize(j);
  stats_lanes.update().reorder(with_t({a.ri, j, a.rs_all.y, a.ro}, {})).vectorize(a.ri).vectorize(j);
  Var so("so"), sv("sv");
  p.plan.stage(a.weight, vb, at);
  a.weight.align_bounds(a.s, positions_per_vector).reorder_storage(storage({a.ri, a.s, a.ro}, {a.c, a.g}));
  if (positions_per_vector > 1) {
    a.weight.split(a.s, so, sv, positions_per_vector, TailStrategy::RoundUp)
        .reorder(with_t({a.ri, sv, so, a.ro}, {}))
        .vectorize(a.ri)
        .vectorize(sv);
  } else {
    a.weight.reorder(with_t({a.ri, a.s, a.ro}, {})).vectorize(a.ri);
  }
  a.den.compute_at(at).vectorize(a.ri);
  Func den_lanes = a.den.update().rfactor(a.rb.x, j);
  a.den.update().reorder(with_t({a.ri, a.rb.x, a.ro}, {})).vectorize(a.ri);
  den_lanes.compute_at(at).reorder_storage(storage({a.ri, j, a.ro}, {a.c, a.g})).vectorize(a.ri).vectorize(j);
  den_lanes.update().reorder(with_t({a.ri, j, a.rb.y, a.ro}, {})).vectorize(a.ri).vectorize(j);

  // Σ weight · v, the output accumulator: V streams in blocks of `block` positions, each
  // block shared by the task's tokens. A prefill token's v is the block zeroed past its
  // position (v_live, on the vector unit), so that its product never reads another
  // token's live rows as its own.
  p.plan.stage(a.num, acc, at);
  if (on_matrix) {
    // M = head_dim, K = positions, N = the head block (vectorized): (p·v)ᵀ = Vᵀ · pᵀ.
    a.num.update()
        .reorder(prefill ? std::vector<VarOrRVar>{a.ri, a.d, a.rv.x, a.ro, a.t, a.rv.y}
                         : std::vector<VarOrRVar>{a.ri, a.d, a.rv.x, a.rv.y, a.ro})
        .vectorize(a.ri);
    p.plan.matrix(a.num, 1, a.d.name(), a.ri.name(), a.rv.x.name(), sim::Dtype::fp16);
  } else {
    a.num.bound(a.d, 0, head_dim).align_storage(a.d, lanes).vectorize(a.d, lanes, guard);
    a.num.update()
        .reorder(prefill ? std::vector<VarOrRVar>{a.d, a.ri, a.rv.x, a.ro, a.t, a.rv.y}
                         : std::vector<VarOrRVar>{a.d, a.ri, a.rv.x, a.rv.y, a.ro})
        .vectorize(a.d, lanes, guard);
    v_tile.bound(d, 0, head_dim).align_storage(d, lanes).vectorize(d, lanes, guard);
  }
  p.plan.stage(v_tile, kb, LoopLevel(a.num, a.rv.y), db, true);
  if (prefill) {
    p.plan.stage(a.v_live, kb, LoopLevel(a.num, a.t));
    a.v_live.bound(a.d, 0, head_dim).align_storage(a.d, lanes).vectorize(a.d, lanes, guard);
  }

  // The exact combine over the splits up to the position, once, then the output.
  a.combined.compute_root();
  a.scale.compute_root();
  a.total_den.compute_root();
  a.total_num.compute_root();
  p.finish({y}, {"o"});
  return p;
}

namespace {

// The variant: "<dtype>,<masked|unmasked>,<decode|prefill>[,qo=float32]".
struct AttentionVariant {
  bool f16 = false, masked = false, prefill = false, qo_float32 = false;
};

AttentionVariant parse_variant(const std::string& v) {
  return AttentionVariant{v.rfind("float16", 0) == 0, v.find(",masked") != std::string::npos,
                          v.find(",prefill") != std::string::npos, v.find(",qo=float32") != std::string::npos};
}

int64_t cache_bytes(const AttentionVariant& v) { return v.f16 ? 2 : 4; }

// fp32 q cannot feed an fp16 matrix unit: that variant's products run on the vector unit.
bool variant_on_matrix(const sim::ArchSpec& arch, const AttentionVariant& v) {
  return !v.qo_float32 && attention_on_matrix(arch, cache_bytes(v));
}

}  // namespace

const NpuSchedule& npu_schedule_attention() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "attention";
    s.shape = {"T", "Hq", "Hkv", "S_max", "Dh"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"T", 1}, {"Hq", 32}, {"Hkv", 8}, {"S_max", 8192}, {"Dh", 128}};
    // A prompt chunk of 128 tokens at positions 896 … 1023 (the analysis walks every tile:
    // longer prefills take seconds on the small presets).
    s.prefill = {{"T", 128}, {"Hq", 32}, {"Hkv", 8}, {"S_max", 1024}, {"Dh", 128}};
    // Scalars of the one lowering per variant (RDom extents and split factors of the nest).
    // A block is whole vectors of positions (attention_softmax_lanes / 4 per vector: 16 or
    // fewer up to a 256-byte vector-buffer alignment).
    s.knobs = {{"block", 16, 1024, "S_max", 16}, {"split_blocks", 1, 64, ""}, {"tokens", 1, 1024, "T"}};
    s.sim_params = {{"masked", ParamSpec::Kind::integer, "0", 0, 1, {},
                     "1: the call has a mask (its rows are staged and its selects costed)"},
                    {"qo_float32", ParamSpec::Kind::integer, "0", 0, 1, {},
                     "1: q and o in fp32 over an fp16 cache, on the vector unit (qkv_attention's int8-weight "
                     "path: q or o rounded to fp16 would flip int8 steps of o's per-token quantization)"}};
    s.call_params = [](const Call& call) {
      const bool qo32 = call.tensor("q").dtype == DType::float32 && call.tensor("k_cache").dtype == DType::float16;
      return std::map<std::string, std::string>{{"masked", call.tensors.count("mask") ? "1" : "0"},
                                                {"qo_float32", qo32 ? "1" : "0"}};
    };
    s.variant = [](const std::string& dtype, const Params& params, const Shape& shape) {
      const int64_t hq = shape.at("Hq"), hkv = shape.at("Hkv");
      if (hq % hkv != 0)  // the op's own rule (runtime/ops/attention.cpp)
        throw std::invalid_argument("attention: Hq = " + std::to_string(hq) + " is not a multiple of Hkv = " +
                                    std::to_string(hkv) + " (query head h reads kv head h / (Hq / Hkv))");
      const bool qo32 = params.integer("qo_float32") != 0;
      if (qo32 && dtype != "float16")
        throw std::invalid_argument("attention: qo_float32 = 1 with dtype " + dtype + ": only an fp16 cache has it");
      return dtype + (params.integer("masked") ? ",masked" : ",unmasked") +
             (shape.at("T") == 1 ? ",decode" : ",prefill") + (qo32 ? ",qo=float32" : "");
    };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const AttentionVariant v = parse_variant(variant);
      return attention_npu_pipeline(arch, v.f16 ? Float(16) : Float(32), v.masked, variant_on_matrix(arch, v),
                                    fixed.at("double_buffer") != 0, v.prefill, v.qo_float32);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const AttentionVariant v = parse_variant(variant);
      const AttentionBlocks b =
          choose_attention_blocks(arch, cache_bytes(v), shape.at("T"), shape.at("S_max"), shape.at("Hq"), shape.at("Hkv"),
                                  shape.at("Dh"), variant_on_matrix(arch, v), v.qo_float32 ? 4 : cache_bytes(v));
      return Knobs{{"block", b.block}, {"split_blocks", b.split / b.block}, {"tokens", b.tokens},
                   {"double_buffer", b.double_buffer}};
    };
    // The analysis: the last token at the cache's last position (every row read).
    s.analysis_ints = [](const Shape& shape) {
      return std::map<std::string, int64_t>{{"position", shape.at("S_max") - 1}, {"max_position", shape.at("S_max") - 1}};
    };
    s.prepare = [](const Call& call, ExtraInputs& extra) {
      const TensorView& p = call.tensor("positions");
      const auto* pos = static_cast<const int32_t*>(p.data);
      extra.ints["position"] = pos[0];
      extra.ints["max_position"] = *std::max_element(pos, pos + p.numel());
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
