#include "schedules/npu/linear.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "layouts/nz.h"
#include "ops/float_convert.h"
#include "schedules/npu/matrix_granule.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

int64_t lanes_of(const sim::ArchSpec& arch, int64_t element_bytes) {
  return std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
}

// The accumulator is copied into the vector buffer for the epilogue where the vector unit
// cannot read the accumulator buffer (Ascend's L0C), as int8_gemm's schedule does.
bool stages_acc(const sim::ArchSpec& arch) {
  const sim::Buffer* acc = arch.find_buffer(arch.roles.matrix_acc);
  return acc && !acc->read_by(sim::Unit::vector);
}

// `nb`: the columns of w's sub-tile on chip at a time (of the tn the accumulator holds).
std::vector<sim::PlannedAllocation> matrix_allocations(const sim::ArchSpec& arch, int64_t eb, int64_t tm, int64_t tn,
                                                       int64_t tk, int64_t nb, bool db) {
  const sim::BufferRoles& r = arch.roles;
  std::vector<sim::PlannedAllocation> v = {
      {r.matrix_a, tm * tk * eb, db}, {r.matrix_b, tk * nb * eb, db}, {r.matrix_acc, tm * tn * 4, false}};
  if (stages_acc(arch)) v.push_back({r.vector, tm * tn * 4, false});
  return v;
}

// The vector path: x's and w's K-chunk tiles (twice when double-buffered), the tile's
// partial sums (a vector per output) and its sums, all in the vector buffer.
std::vector<sim::PlannedAllocation> vector_allocations(const sim::ArchSpec& arch, int64_t eb, int64_t tm, int64_t tn,
                                                       int64_t tk, bool db) {
  const std::string& vb = arch.roles.vector;
  const int64_t chunk = round_up(tk, lanes_of(arch, eb)) * eb;
  return {{vb, tm * chunk, db}, {vb, tn * chunk, db}, {vb, lanes_of(arch, 4) * 4 * tn * tm, false},
          {vb, tm * tn * 4, false}};
}

// The N tiles are what the cores share: a count that is a multiple of the cores where N
// allows it (at least one tile each), else the busiest core streams a whole tile more than
// the rest (N = 2560 in tiles of 704 on 3 cores: 1408 columns against an even 853).
// Narrower tiles cost one more x row and DMA setup each, which at decode is far less.
int64_t balanced_n_tile(int64_t N, int64_t tn, int64_t step, int64_t cores) {
  const int64_t tiles = round_up((N + tn - 1) / tn, cores);
  return std::min(tn, std::max(step, round_up((N + tiles - 1) / tiles, step)));
}

// Steps of `extent` (multiples of `unit`) in order of preference: rows of `eb`-byte
// elements that are whole bursts of `engine`, then whole alignments (which the rules
// require), then `unit`; a step is kept only up to the extent (rounded to `unit`).
std::vector<int64_t> dma_steps(const sim::ArchSpec& arch, sim::DmaDirection engine, int64_t unit, int64_t eb,
                               int64_t extent) {
  std::vector<int64_t> steps;
  if (!arch.dma.empty()) {
    const sim::DmaEngine& e = arch.dma_for(engine);
    for (int64_t bytes : {std::max<int64_t>(1, e.burst_bytes), e.alignment}) {
      int64_t step = unit;
      while ((step * eb) % bytes != 0 && step < 1024 * unit) step += unit;
      if ((step * eb) % bytes == 0 && step <= round_up(extent, unit) &&
          std::find(steps.begin(), steps.end(), step) == steps.end())
        steps.push_back(step);
    }
  }
  if (std::find(steps.begin(), steps.end(), unit) == steps.end()) steps.push_back(unit);
  return steps;
}

}  // namespace

bool linear_on_matrix(const sim::ArchSpec& arch, int64_t element_bytes) {
  return element_bytes == 2 && arch.matrix.supports(sim::Dtype::fp16);
}

LinearTiles choose_linear_tiles(const sim::ArchSpec& arch, int64_t M, int64_t K, int64_t N, int64_t eb,
                                int64_t out_eb, bool on_matrix) {
  const int64_t cores = std::max<int64_t>(1, arch.cores);
  const int64_t lanes = lanes_of(arch, 4);
  const sim::DmaEngine* load = arch.dma.empty() ? nullptr : &arch.dma_for(sim::DmaDirection::in);
  const double setup_bytes = load ? load->setup_cycles * load->bytes_per_cycle : 0.0;
  // The vector path's K chunks are whole vectors of partial sums; its M and N any size.
  const Granule unit = on_matrix ? matrix_granule(arch, sim::Dtype::fp16) : Granule{1, lanes, 1};
  // The w sub-tile for an output tile: the whole tile where `sub` is false, else the
  // widest divisor of tn in the unit's steps that fits beside the rest (the matrix path
  // only: the accumulator can be as wide as a store burst while the weight operand buffer
  // takes it in parts; Ascend's L0B holds 64 of 256 fp16 columns at K chunks of a whole
  // burst). 0: none fits.
  auto sub_tile = [&](int64_t tm, int64_t tn, int64_t tk, bool db, bool sub) -> int64_t {
    if (!on_matrix) return sim::fits_buffers(arch, vector_allocations(arch, eb, tm, tn, tk, db)) ? tn : 0;
    for (int64_t nb = tn; nb >= unit.n && (sub || nb == tn); nb -= unit.n)
      if (tn % nb == 0 && sim::fits_buffers(arch, matrix_allocations(arch, eb, tm, tn, tk, nb, db))) return nb;
    return 0;
  };
  // K chunks of whole load bursts and output rows of whole store bursts where they fit,
  // else whole alignments, else the unit's own granule.
  // Whole-burst loads first: they move the weights, the bulk of the op's bytes. Whole w
  // tiles and w in sub-tiles compete on the bytes they move (their setups included).
  for (int64_t kstep : dma_steps(arch, sim::DmaDirection::in, unit.k, eb, K)) {
    for (int64_t nstep : dma_steps(arch, sim::DmaDirection::out, unit.n, out_eb, N)) {
      const Granule g{unit.m, kstep, nstep};
      for (bool db : {true, false}) {
        LinearTiles best;
        double best_bytes = -1;
        bool best_sub = false;
        for (int64_t tm : tile_halvings(M, g.m)) {
          for (bool sub : {false, true}) {
            if (sub && !on_matrix) break;
            for (int64_t tk : tile_halvings(K, g.k)) {
              if (sub_tile(tm, g.n, tk, db, sub) == 0) continue;
              int64_t lo = g.n, hi = round_up(N, g.n);  // the widest N tile that fits
              while (lo < hi) {
                const int64_t mid = round_up((lo + hi + 1) / 2, g.n);
                if (mid > hi) break;
                if (sub_tile(tm, mid, tk, db, sub) > 0) {
                  lo = mid;
                } else {
                  hi = mid - g.n;
                }
              }
              // x is reloaded for every N tile, w for every M tile; each transfer (x's per
              // tile, w's per sub-tile) also costs a DMA setup (as bytes the engine could
              // have moved meanwhile).
              const double tiles = std::ceil(double(N) / lo) * std::ceil(double(M) / tm) * std::ceil(double(K) / tk);
              const double w_parts = tiles * double(lo / sub_tile(tm, lo, tk, db, sub));
              if (tiles + w_parts > 2e5) continue;  // the analysis walks every tile: well under its limit
              const double bytes = double(M) * K * std::ceil(double(N) / lo) +
                                   double(N) * K * std::ceil(double(M) / tm) + (tiles + w_parts) * setup_bytes;
              if (best_bytes < 0 || bytes < best_bytes)
                best_bytes = bytes, best = LinearTiles{tm, lo, tk, db, 0}, best_sub = sub;
            }
          }
        }
        if (best_bytes >= 0) {
          best.n = balanced_n_tile(N, best.n, g.n, cores);
          best.nb = sub_tile(best.m, best.n, best.k, best.double_buffer, best_sub);
          return best;
        }
      }
    }
  }
  return LinearTiles{unit.m, unit.n, unit.k, false, unit.n};  // does not fit; the capacity rule says by how much
}

NpuPipeline linear_npu_pipeline(const sim::ArchSpec& arch, Type in, Type out, bool on_matrix, bool double_buffer) {
  NpuPipeline p;
  p.op = "linear";
  ImageParam x(in, 2, "x"), w(in, 2, "w");  // (k, m), (k, n)
  Param<int32_t> tm("tile_m"), tn("tile_n"), tk("tile_k"), tnb("tile_nb");
  p.inputs = {x, w};
  p.ints = {tm, tn, tk};
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  const TailStrategy guard = TailStrategy::GuardWithIf;
  const sim::BufferRoles& roles = arch.roles;
  Expr K = x.dim(0).extent();
  Var k("k"), m("m"), n("n"), no("no"), ni("ni"), mo("mo"), mi("mi");
  Func y("linear_npu");

  if (on_matrix) {
    // As int8_gemm's schedule, in fp16 products with fp32 accumulation.
    Func a_tile("a_tile"), w_tile("w_tile"), acc("acc");
    RDom r(0, K, "r");
    const bool nz = arch.matrix.layout == sim::OperandLayout::nz;
    const int k0 = static_cast<int>(layouts::kNzFractalRowBytes / in.bytes());
    const int r0 = static_cast<int>(layouts::kNzFractalRows);
    Var ki("ki"), rr("rr"), rb("rb"), kb("kb"), kf("kf");
    std::function<Expr(Expr, Expr)> a_at, w_at;
    // Clamped reads: Halide 14's bounds of the inputs over a tiled, guarded loop can run
    // one tile past the end.
    if (nz) {
      a_tile(ki, rr, rb, kb) = x(clamp(kb * k0 + ki, 0, K - 1), clamp(rb * r0 + rr, 0, x.dim(1).extent() - 1));
      w_tile(ki, rr, rb, kb) = w(clamp(kb * k0 + ki, 0, K - 1), clamp(rb * r0 + rr, 0, w.dim(1).extent() - 1));
      a_at = [&](Expr kk, Expr mm) { return a_tile(kk % k0, mm % r0, mm / r0, kk / k0); };
      w_at = [&](Expr kk, Expr nn) { return w_tile(kk % k0, nn % r0, nn / r0, kk / k0); };
    } else {
      a_tile(k, m) = x(clamp(k, 0, K - 1), clamp(m, 0, x.dim(1).extent() - 1));
      w_tile(k, n) = w(clamp(k, 0, K - 1), clamp(n, 0, w.dim(1).extent() - 1));
      a_at = [&](Expr kk, Expr mm) { return a_tile(kk, mm); };
      w_at = [&](Expr kk, Expr nn) { return w_tile(kk, nn); };
    }
    acc(n, m) = 0.0f;
    acc(n, m) += ops::widen_to_f32(a_at(r, m), portable) * ops::widen_to_f32(w_at(r, n), portable);
    Func acc_v("acc_vector");
    const bool stage = stages_acc(arch);
    if (stage) acc_v(n, m) = acc(n, m);
    Func e = stage ? acc_v : acc;
    y(n, m) = ops::narrow_from_f32(e(n, m), out, portable);
    y.split(n, no, ni, tn, guard).split(m, mo, mi, tm, guard).reorder(ni, mi, mo, no).parallel(no);
    p.plan.stage(acc, roles.matrix_acc, LoopLevel(y, mo));
    RVar ro("ro"), ri("ri");
    // w in sub-tiles of tile_nb columns under the output tile (one x tile per K chunk).
    Var nbo("nbo"), nbi("nbi");
    acc.update().split(r.x, ro, ri, tk, guard).split(n, nbo, nbi, tnb, guard).reorder(ri, nbi, m, nbo, ro);
    p.ints.push_back(tnb);
    p.plan.stage(a_tile, roles.matrix_a, LoopLevel(acc, ro), double_buffer, true);
    p.plan.stage(w_tile, roles.matrix_b, LoopLevel(acc, nbo), double_buffer, true);
    if (nz) {
      for (Func f : {a_tile, w_tile}) {
        f.reorder(ki, kb, rr, rb).fuse(ki, kb, kf);
        p.plan.nz(f, layouts::kNzFractalRowBytes);
      }
    }
    p.plan.matrix(acc, 1, m.name(), nbi.name(), ri.name(), sim::Dtype::fp16, {x.dim(1).extent(), w.dim(1).extent(), K});
    if (stage) p.plan.stage(acc_v, roles.vector, LoopLevel(y, mo));
    p.finish({y}, {"y"});
    return p;
  }

  // The vector unit: `lanes` partial sums per output, as define_linear keeps them, but over
  // K chunks of tile_k (a multiple of the lanes) whose x and w tiles are DMA'd in turn, so
  // that an output tile can be as wide as a store burst while only tile_k of each w row is
  // on chip. define_linear's separate tail update reads w outside such a chunk loop, so
  // here the K tail is folded into the last chunk's lanes (zero past K): the same sum in a
  // different fp32 order.
  const int lanes = static_cast<int>(lanes_of(arch, 4));
  const int in_lanes = static_cast<int>(lanes_of(arch, in.bytes()));
  Func x_tile("x_tile"), w_tile("w_tile"), part("linear_part"), sum("linear_sum");
  x_tile(k, m) = x(clamp(k, 0, K - 1), clamp(m, 0, x.dim(1).extent() - 1));
  w_tile(k, n) = w(clamp(k, 0, K - 1), clamp(n, 0, w.dim(1).extent() - 1));
  Var l("l");
  RDom rk(0, (K + lanes - 1) / lanes, "rk");
  Expr kk = rk * lanes + l;
  part(l, n, m) = 0.0f;
  part(l, n, m) += select(kk < K,
                          ops::widen_to_f32(x_tile(kk, m), portable) * ops::widen_to_f32(w_tile(kk, n), portable),
                          0.0f);
  RDom rl(0, lanes, "rl");
  sum(n, m) = 0.0f;
  sum(n, m) += part(rl, n, m);
  y(n, m) = ops::narrow_from_f32(sum(n, m), out, portable);
  // N tiles outermost and split across cores (decode's one token has only its columns to
  // share), M tiles inside; each tile's partial sums stay in the vector buffer over K.
  y.split(n, no, ni, tn, guard).split(m, mo, mi, tm, guard).reorder(ni, mi, mo, no).parallel(no);
  const std::string& vb = roles.vector;
  p.plan.stage(part, vb, LoopLevel(y, mo));
  p.plan.stage(sum, vb, LoopLevel(y, mo));
  part.vectorize(l);
  RVar ro("ro"), ri("ri");
  part.update().split(rk.x, ro, ri, tk / lanes, guard).reorder(l, ri, n, m, ro).vectorize(l);
  p.plan.stage(w_tile, vb, LoopLevel(part, ro), double_buffer, true);
  p.plan.stage(x_tile, vb, LoopLevel(part, ro), double_buffer, true);
  for (Func f : {x_tile, w_tile}) f.align_storage(k, in_lanes).vectorize(k, in_lanes, guard);
  p.finish({y}, {"y"});
  return p;
}

namespace {

struct LinearVariant {
  bool f16 = false;
  std::string out;  // float32 | float16
  bool on_matrix = false;
};

LinearVariant parse_variant(const std::string& v) {
  LinearVariant r;
  const size_t a = v.find(','), b = v.find(',', a + 1);
  r.f16 = v.substr(0, a) == "float16";
  r.out = v.substr(a + 1, b - a - 1);
  r.on_matrix = v.substr(b + 1) == "matrix";
  return r;
}

}  // namespace

const NpuSchedule& npu_stage_linear() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "linear";
    s.stage_only = true;
    s.shape = {"M", "K", "N"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"M", 1}, {"K", 4096}, {"N", 4096}};
    s.prefill = {{"M", 128}, {"K", 4096}, {"N", 4096}};
    // tile_nb: the matrix path's w sub-tile (columns of the tile_n the accumulator holds).
    s.knobs = {{"tile_m", 1, 2147483647, "M"},
               {"tile_n", 1, 2147483647, "N"},
               {"tile_k", 1, 2147483647, "K"},
               {"tile_nb", 1, 2147483647, ""}};
    s.params = {{"out", ParamSpec::Kind::choice, "same", 0, 0, {"same", "float32", "float16"}, "y's dtype; same = x's"},
                {"unit", ParamSpec::Kind::choice, "auto", 0, 0, {"auto", "matrix", "vector"},
                 "where the products run; auto = the matrix unit where it has fp16 and x is fp16"}};
    // "<x and w dtype>,<y dtype>,<matrix|vector>": the unit is decided here, per arch-free
    // variant, by `unit`; auto resolves in choose/build against the arch.
    s.variant = [](const std::string& dtype, const Params& p, const Shape&) {
      const std::string out = p.choice("out") == "same" ? dtype : p.choice("out");
      return dtype + "," + out + "," + p.choice("unit");
    };
    auto on_matrix = [](const sim::ArchSpec& arch, const LinearVariant& v, const std::string& unit) {
      return unit == "auto" ? linear_on_matrix(arch, v.f16 ? 2 : 4) : unit == "matrix";
    };
    s.build = [on_matrix](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const LinearVariant v = parse_variant(variant);
      const std::string unit = variant.substr(variant.rfind(',') + 1);
      return linear_npu_pipeline(arch, v.f16 ? Float(16) : Float(32), v.out == "float16" ? Float(16) : Float(32),
                                 on_matrix(arch, v, unit), fixed.at("double_buffer") != 0);
    };
    s.choose = [on_matrix](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const LinearVariant v = parse_variant(variant);
      const std::string unit = variant.substr(variant.rfind(',') + 1);
      const LinearTiles t = choose_linear_tiles(arch, shape.at("M"), shape.at("K"), shape.at("N"), v.f16 ? 2 : 4,
                                                v.out == "float16" ? 2 : 4, on_matrix(arch, v, unit));
      return Knobs{{"tile_m", t.m}, {"tile_n", t.n}, {"tile_k", t.k}, {"tile_nb", t.nb}, {"double_buffer", t.double_buffer}};
    };
    s.extra_extents = [](const Shape& shape) {
      const int64_t M = shape.at("M"), K = shape.at("K"), N = shape.at("N");
      return std::map<std::string, std::vector<int64_t>>{{"x", {K, M}}, {"w", {K, N}}, {"y", {N, M}}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
