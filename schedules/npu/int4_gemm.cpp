// The INT4-weight GEMM NPU schedule, for int8 (per-token) activations: output tiles of
// [tile_m, tile_n] keep fp32 sums in the vector buffer over the groups of K; each group's
// product runs on the matrix unit into an int32 tile, which the vector unit scales into the
// sums. The packed weights arrive by DMA in K chunks of tile_k as they are in DRAM (two int4
// per byte), so DRAM carries 0.5 B per weight. Two variants, by where the nibbles become
// operands:
//   unpack (default where the matrix unit has no int4, i.e. on every preset): the vector unit
//     turns each group's nibbles into int8 d = q − zp in the weight operand buffer, and the
//     matrix unit multiplies int8 by int8: int4 is memory-only, int4 in DRAM and int8 at the
//     matrix unit. The decode planner runs its int4 GEMMs through this schedule
//     (tools/decode/decoder_layer.cpp).
//   int4 (where the matrix unit lists int4, or `--param unit=matrix`): the packed bytes go to
//     the weight operand buffer as they are and the matrix unit multiplies the unsigned
//     nibbles by int8 (its int4-weight mode); the vector unit takes the zero points out
//     through the group sums of a. On a unit without int4 the matrix_dtype rule says so.
// Tile sizes are pipeline parameters chosen per shape by choose_int4_tiles.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <map>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "layouts/half.h"
#include "ops/float_convert.h"
#include "schedules/npu/matrix_granule.h"
#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }
int64_t lcm(int64_t a, int64_t b) { return a / std::gcd(a, b) * b; }

struct Int4Tiles {
  int64_t m = 1, n = 1, k = 1;
  bool double_buffer = false;
};

// Whether the matrix unit multiplies the packed nibbles itself (variant int4).
bool int4_on_matrix(const sim::ArchSpec& arch, const std::string& unit) {
  return unit == "matrix" || arch.matrix.supports(sim::Dtype::int4);
}

// The accumulator is copied into the vector buffer for the scaling where the vector unit
// cannot read the accumulator buffer (Ascend's L0C), as int8_gemm's schedule does.
bool stages_acc(const sim::ArchSpec& arch) {
  const sim::Buffer* acc = arch.find_buffer(arch.roles.matrix_acc);
  return acc && !acc->read_by(sim::Unit::vector);
}

// Whether the schedule stages the zero points: the int4 variant takes them out through a's
// group sums (8 for symmetric weights); only the unpack of symmetric weights goes without.
bool stages_zero_points(bool int4, bool zero_points) { return int4 || zero_points; }

// What the schedule allocates for tiles (tm, tn, tk) of a K with `groups` groups of G.
std::vector<sim::PlannedAllocation> allocations(const sim::ArchSpec& arch, bool int4, bool zero_points, int64_t G,
                                                int64_t groups, int64_t tm, int64_t tn, int64_t tk, bool db) {
  const sim::BufferRoles& r = arch.roles;
  std::vector<sim::PlannedAllocation> v = {
      {r.matrix_a, tm * tk, db},                          // a's K chunk
      {int4 ? r.matrix_b : r.vector, tn * tk / 2, db},     // the packed weights' K chunk
      {r.matrix_acc, tm * tn * 4, false},                 // one group's int32 products
      {r.vector, tm * tn * 4, false},                     // the fp32 sums
      {r.vector, tn * groups * 4, false},                 // the tile's scales
      {r.vector, tm * 32, false}};                        // its row scales (a 32-byte row each)
  if (stages_zero_points(int4, zero_points)) v.push_back({r.vector, tn * groups, false});  // and zero points
  if (!int4) v.push_back({r.matrix_b, tn * G, false});  // one unpacked group
  if (int4) v.push_back({r.vector, tm * 4, false});      // the rows' group sums of a
  if (stages_acc(arch)) v.push_back({r.vector, tm * tn * 4, false});
  return v;
}

}  // namespace

// Tiles in multiples of the matrix unit's shape that fit the arch's buffers, counted as the
// capacity rule counts (sim::fits_buffers). K chunks are whole groups whose packed bytes and
// activations are whole load bursts where the shape allows (alignments at least, which the
// rules require); N tiles store whole bursts of output rows. Among the shapes that fit, the
// one that moves the fewest DRAM bytes (activations reload per N tile, weights per M tile,
// a DMA setup per transfer counted as bytes), double-buffered when anything fits that way,
// N balanced across the cores.
Int4Tiles choose_int4_tiles(const sim::ArchSpec& arch, bool int4, bool zero_points, int64_t M, int64_t N, int64_t K,
                            int64_t G, int64_t out_bytes) {
  const Granule g = matrix_granule(arch, int4 ? sim::Dtype::int4 : sim::Dtype::int8);
  const int64_t groups = (K + G - 1) / G, k_full = groups * G;
  const sim::DmaEngine* load = arch.dma.empty() ? nullptr : &arch.dma_for(sim::DmaDirection::in);
  int64_t k_step = lcm(G, std::max<int64_t>(1, g.k));
  const int64_t unit_n = std::max<int64_t>(1, g.n);
  int64_t n_step = unit_n;
  if (load) {
    // The packed chunk (tile_k / 2 bytes a row) in whole alignments, then whole bursts.
    const int64_t aligned = lcm(k_step, 2 * load->alignment);
    const int64_t burst = lcm(aligned, 2 * std::max<int64_t>(1, load->burst_bytes));
    k_step = burst <= k_full ? burst : aligned;
  }
  if (!arch.dma.empty()) {
    const sim::DmaEngine& store = arch.dma_for(sim::DmaDirection::out);
    const int64_t burst = lcm(n_step, std::max<int64_t>(1, store.burst_bytes) / std::gcd(store.burst_bytes, out_bytes));
    if (burst <= round_up(N, n_step)) n_step = burst;
  }
  const double setup_bytes = load ? load->setup_cycles * load->bytes_per_cycle : 0.0;
  const int64_t cores = std::max<int64_t>(1, arch.cores);
  // Whole store bursts first; where no tile of them fits (a long K's scales across a wide
  // N tile), the matrix unit's own N step, whose stores are partial bursts (a warning).
  for (const int64_t step : {n_step, unit_n}) {
    n_step = step;
    for (bool db : {true, false}) {
      Int4Tiles best;
      double best_cost = -1;
      for (int64_t tm : tile_halvings(M, g.m)) {
        for (int64_t tk : tile_halvings(k_full, k_step)) {
          if (tk % G != 0) continue;
          auto fits = [&](int64_t tn) {
            return sim::fits_buffers(arch, allocations(arch, int4, zero_points, G, groups, tm, tn, tk, db));
          };
          if (!fits(n_step)) continue;
          int64_t lo = n_step, hi = round_up(N, n_step);  // the widest N tile that fits
          while (lo < hi) {
            const int64_t mid = round_up((lo + hi + 1) / 2, n_step);
            if (mid > hi) break;
            if (fits(mid)) {
              lo = mid;
            } else {
              hi = mid - n_step;
            }
          }
          // At least one N tile per core where N allows it: decode has only its columns to share.
          const int64_t tn = std::max(n_step, std::min(lo, round_up((N + cores - 1) / cores, n_step)));
          const double n_tiles = std::ceil(double(N) / tn), m_tiles = std::ceil(double(M) / tm),
                       k_tiles = std::ceil(double(k_full) / tk);
          const double bytes = double(M) * k_full * n_tiles + double(N) * k_full / 2 * m_tiles;
          const double cost = bytes + 2 * n_tiles * m_tiles * k_tiles * setup_bytes;
          if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            best = Int4Tiles{tm, tn, tk, db};
          }
        }
      }
      if (best_cost >= 0) return best;
    }
  }
  return Int4Tiles{g.m, unit_n, k_step, false};  // the unit's own tile; the rules report the overflow
}

// Inputs a [M, K] int8 (Halide (k, m)), w [N, ceil(K/2)] uint8 ((kb, n)), then the extra
// inputs of the npu-sim run (prepare below): group_scales fp32 and group_zero_points uint8,
// [N, groups] ((g, n); symmetric weights have zero points of 8 and nibble_xor 0x88: two's
// complement q becomes q + 8), row_scales fp32 [M, 8] ((i, m): each row's activation scale
// 8 times: one 32-byte DMA run per row instead of a 4-byte one). Int params G, nibble_xor,
// tile_m, tile_n, tile_k. Output "int4_gemm_npu" (n, m), tensor y. Only the int4 variant
// reads nibble_xor; the unpack of symmetric weights (`zero_points` false) reads no zero
// points either: it sign-extends the two's complement nibbles itself.
NpuPipeline int4_gemm_npu_pipeline(const sim::ArchSpec& arch, bool int4, bool zero_points, Type out_type,
                                   bool double_buffer) {
  NpuPipeline p;
  p.op = "int4_gemm";
  ImageParam a(Int(8), 2, "a"), w(UInt(8), 2, "w"), gs(Float(32), 2, "group_scales"),
      gz(UInt(8), 2, "group_zero_points"), rs(Float(32), 2, "row_scales");
  Param<int32_t> G("G"), xr("nibble_xor"), tm("tile_m"), tn("tile_n"), tk("tile_k");
  const bool uses_zero_points = stages_zero_points(int4, zero_points);
  p.inputs = {a, w, gs, rs};
  p.ints = {G, tm, tn, tk};
  if (uses_zero_points) p.inputs.push_back(gz);
  if (int4) p.ints.push_back(xr);
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  const TailStrategy guard = TailStrategy::GuardWithIf;
  const sim::BufferRoles& roles = arch.roles;
  Expr K = a.dim(0).extent(), M = a.dim(1).extent(), N = w.dim(1).extent(), KB = w.dim(0).extent();
  Expr groups = gs.dim(0).extent();
  Var k("k"), kb("kb"), h("h"), j("j"), m("m"), n("n"), g("g"), i("i");
  // Clamped reads, as int8_gemm's: Halide 14's bounds of the inputs over a tiled, guarded
  // loop can run one tile past the end.
  Func a_tile("a_tile"), w_tile("w_tile"), s_tile("scale_tile"), z_tile("zero_point_tile"), rs_tile("row_scale_tile");
  a_tile(k, m) = a(clamp(k, 0, K - 1), clamp(m, 0, M - 1));
  w_tile(kb, n) = w(clamp(kb, 0, KB - 1), clamp(n, 0, N - 1));
  s_tile(g, n) = gs(clamp(g, 0, groups - 1), clamp(n, 0, N - 1));
  z_tile(g, n) = gz(clamp(g, 0, groups - 1), clamp(n, 0, N - 1));
  rs_tile(i, m) = rs(i, clamp(m, 0, M - 1));
  // Nibble h of byte kb (k = 2·kb + h), unsigned: with zero points q; without, q + 8.
  auto nibble = [&](Expr hh, Expr kk, Expr nn) {
    Expr byte = w_tile(kk, nn) ^ cast<uint8_t>(xr);
    return select(hh == 0, byte & cast<uint8_t>(15), byte >> 4);
  };
  RDom r(0, G, "r");
  Expr kr = g * G + r;
  // Past K the nibbles are padding (and a is clamped): those products are left out.
  Func w8("w_unpacked"), acc("acc"), a_sums("a_group_sums"), sums("sums"), y("int4_gemm_npu");
  acc(n, m, g) = 0;
  if (int4) {
    acc(n, m, g) += select(kr < K, cast<int32_t>(a_tile(kr, m)) * cast<int32_t>(nibble(kr % 2, kr / 2, n)), 0);
    a_sums(m, g) = 0;
    a_sums(m, g) += select(kr < K, cast<int32_t>(a_tile(kr, m)), 0);
  } else {
    // Each group's weights unpacked to int8 by the vector unit: (h, j, n, g), nibble h of
    // byte j of group g (k = g·G + 2·j + h). The unsigned-to-signed cast of one width is free.
    Expr byte = w_tile(g * (G / 2) + j, n);
    if (zero_points) {
      // d = q − zp in [−15, 15], the group's zero point one value per channel: 2 operations
      // a weight (the nibble's mask or shift, the subtraction).
      w8(h, j, n, g) = cast<int8_t>(select(h == 0, byte & cast<uint8_t>(15), byte >> 4)) - cast<int8_t>(z_tile(g, n));
    } else {
      // Symmetric: d = q, the two's complement nibble, sign-extended by arithmetic shifts of
      // the byte as int8, the low one moved up first: 1.5 operations a weight.
      w8(h, j, n, g) = select(h == 0, cast<int8_t>(byte << 4) >> 4, cast<int8_t>(byte) >> 4);
    }
    acc(n, m, g) += select(kr < K, cast<int32_t>(a_tile(kr, m)) * cast<int32_t>(w8(r.x % 2, r.x / 2, n, g)), 0);
  }
  // The vector unit reads the group's products from a buffer it can read.
  Func acc_v("acc_vector");
  const bool copy_acc = stages_acc(arch);
  if (copy_acc) acc_v(n, m, g) = acc(n, m, g);
  Func e = copy_acc ? acc_v : acc;
  RDom rg(0, groups, "rg");
  Expr group_sum = int4 ? e(n, m, rg) - cast<int32_t>(z_tile(rg, n)) * a_sums(m, rg) : e(n, m, rg);
  sums(n, m) = 0.0f;
  sums(n, m) += s_tile(rg, n) * cast<float>(group_sum);
  y(n, m) = ops::narrow_from_f32(sums(n, m) * rs_tile(0, m), out_type, portable);

  // Output tiles: N tiles outermost and split across cores, M tiles inside them.
  Var no("no"), ni("ni"), mo("mo"), mi("mi");
  y.split(n, no, ni, tn, guard).split(m, mo, mi, tm, guard).reorder(ni, mi, mo, no).parallel(no);
  p.plan.stage(sums, roles.vector, LoopLevel(y, mo));
  p.plan.stage(rs_tile, roles.vector, LoopLevel(y, mo), false, true);
  rs_tile.bound(i, 0, 8);  // the whole 32-byte row: y reads one of its 8 copies
  p.plan.short_runs(rs_tile, "one activation scale per row of the tile: a decode step's tile has one row");
  // The tile's scales and zero points for all of K: whole rows of [N, groups], one run.
  p.plan.stage(s_tile, roles.vector, LoopLevel(y, mo), false, true);
  if (uses_zero_points) p.plan.stage(z_tile, roles.vector, LoopLevel(y, mo), false, true);
  // K chunks of tile_k (whole groups), each a DMA of a's and the packed weights' chunk; the
  // groups inside a chunk one by one through the matrix unit.
  RVar kc("kc"), gi("gi");
  sums.update().split(rg.x, kc, gi, tk / G, guard).reorder(n, m, gi, kc);
  p.plan.stage(a_tile, roles.matrix_a, LoopLevel(sums, kc), double_buffer, true);
  p.plan.stage(w_tile, int4 ? roles.matrix_b : roles.vector, LoopLevel(sums, kc), double_buffer, true);
  p.plan.stage(acc, roles.matrix_acc, LoopLevel(sums, gi));
  acc.update().reorder(r.x, n, m);
  if (int4) {
    p.plan.stage(a_sums, roles.vector, LoopLevel(sums, gi));
  } else {
    p.plan.stage(w8, roles.matrix_b, LoopLevel(sums, gi));
    w8.bound(h, 0, 2).unroll(h);  // both nibbles of a byte, each with constant shifts
  }
  if (copy_acc) p.plan.stage(acc_v, roles.vector, LoopLevel(sums, gi));
  p.plan.matrix(acc, 1, m.name(), n.name(), r.x.name(), int4 ? sim::Dtype::int4 : sim::Dtype::int8, {M, N, Expr(G)});
  p.finish({y}, {"y"});
  return p;
}

namespace {

struct Variant {
  std::string unit;  // auto | matrix
  Type out;
  bool zero_points = false;  // asymmetric weights
};

// "unit,out,weights", as s.variant writes it.
Variant parse_variant(const std::string& v) {
  const size_t a = v.find(','), b = a == std::string::npos ? a : v.find(',', a + 1);
  if (b == std::string::npos) throw std::invalid_argument("int4_gemm: no NPU variant " + v);
  return {v.substr(0, a), v.substr(a + 1, b - a - 1) == "float16" ? Float(16) : Float(32),
          v.substr(b + 1) == "asymmetric"};
}

}  // namespace

const NpuSchedule& npu_schedule_int4_gemm() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "int4_gemm";
    // G, the group size, is a dim of the analysis: the pipeline's K loop is its groups.
    s.shape = {"M", "K", "N", "G"};
    s.dtypes = {"int8"};
    s.decode = {{"M", 1}, {"K", 4096}, {"N", 4096}, {"G", 128}};
    s.prefill = {{"M", 128}, {"K", 4096}, {"N", 4096}, {"G", 128}};
    s.knobs = {{"tile_m", 1, 2147483647, "M"}, {"tile_n", 1, 2147483647, "N"}, {"tile_k", 1, 2147483647, "K"}};
    s.sim_params = {{"unit", ParamSpec::Kind::choice, "auto", 0, 0, {"auto", "matrix"},
                     "where the nibbles are multiplied: auto = on the matrix unit where it lists int4, else unpacked "
                     "to int8 by the vector unit first; matrix = on the matrix unit (a rule error without int4)"},
                    {"weights", ParamSpec::Kind::choice, "symmetric", 0, 0, {"symmetric", "asymmetric"},
                     "symmetric (two's complement nibbles) or asymmetric (unsigned nibbles with zero points): "
                     "the vector unit's unpack differs"}};
    s.call_params = [](const Call& call) {
      return std::map<std::string, std::string>{
          {"unit", "auto"}, {"weights", call.tensors.count("zero_points") ? "asymmetric" : "symmetric"}};
    };
    s.call_shape = [](const Call& call) {
      return Shape{{"M", call.dim("M")}, {"K", call.dim("K")}, {"N", call.dim("N")}, {"G", call.params.integer("group")}};
    };
    s.variant = [](const std::string&, const Params& p, const Shape& shape) {
      const int64_t G = shape.at("G");
      if (G != 32 && G != 64 && G != 128)
        throw std::invalid_argument("int4_gemm: G = " + std::to_string(G) + ": must be 32, 64 or 128");
      return p.choice("unit") + "," + p.choice("out") + "," + p.choice("weights");
    };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const Variant v = parse_variant(variant);
      return int4_gemm_npu_pipeline(arch, int4_on_matrix(arch, v.unit), v.zero_points, v.out,
                                    fixed.at("double_buffer") != 0);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const Variant v = parse_variant(variant);
      const Int4Tiles t = choose_int4_tiles(arch, int4_on_matrix(arch, v.unit), v.zero_points, shape.at("M"),
                                            shape.at("N"), shape.at("K"), shape.at("G"), v.out.bytes());
      return Knobs{{"tile_m", t.m}, {"tile_n", t.n}, {"tile_k", t.k}, {"double_buffer", t.double_buffer}};
    };
    s.extra_extents = [](const Shape& shape) {
      const int64_t M = shape.at("M"), K = shape.at("K"), N = shape.at("N"), G = shape.at("G");
      return std::map<std::string, std::vector<int64_t>>{
          {"w", {(K + 1) / 2, N}},
          {"group_scales", {(K + G - 1) / G, N}},
          {"group_zero_points", {(K + G - 1) / G, N}},
          {"row_scales", {8, M}}};
    };
    // Each group's scale (fp16 widened) and zero point (8 without zero points, the nibbles
    // then XORed with 8: two's complement q becomes q + 8), and each row's scale.
    s.prepare = [](const Call& call, ExtraInputs& extra) {
      const int64_t M = call.dim("M"), N = call.dim("N"), groups = call.dim("groups");
      const TensorView& scales = call.tensor("scales");
      const bool asym = call.tensors.count("zero_points") > 0;
      const auto* zp = asym ? static_cast<const uint8_t*>(call.tensor("zero_points").data) : nullptr;
      auto* s32 = static_cast<float*>(extra.add_tensor("group_scales", DType::float32, {N, groups}));
      auto* z8 = static_cast<uint8_t*>(extra.add_tensor("group_zero_points", DType::uint8, {N, groups}));
      for (int64_t i = 0; i < N * groups; ++i) {
        s32[i] = scales.dtype == DType::float16 ? layouts::half_to_float(static_cast<const uint16_t*>(scales.data)[i])
                                                : static_cast<const float*>(scales.data)[i];
        z8[i] = asym ? zp[i] : 8;
      }
      auto* rows = static_cast<float*>(extra.add_tensor("row_scales", DType::float32, {M, 8}));
      const auto* a_scales =
          call.tensors.count("a_scales") ? static_cast<const float*>(call.tensor("a_scales").data) : nullptr;
      for (int64_t m = 0; m < M; ++m) std::fill_n(rows + 8 * m, 8, a_scales ? a_scales[m] : 1.0f);
      extra.ints["nibble_xor"] = asym ? 0 : 0x88;
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
