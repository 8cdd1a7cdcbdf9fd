#include "schedules/npu/int8_gemm.h"

#include <algorithm>
#include <cstdint>

#include "ops/float_convert.h"
#include "ops/int8_gemm.h"
#include "simulator/cost/transfer_model.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

// The tile granularity of the matrix unit for int8: m, k, n multiples it runs unpadded.
struct Granule {
  int64_t m = 1, k = 1, n = 1;
};

Granule granule(const sim::ArchSpec& arch) {
  const sim::MatrixUnit& u = arch.matrix;
  if (u.kind == sim::MatrixKind::cube) {
    auto it = u.shapes.find(sim::Dtype::int8);
    if (it == u.shapes.end()) return {};
    return {it->second.m0, it->second.k0, it->second.n0};
  }
  switch (u.dataflow) {  // which GEMM dimensions map onto the array's rows and columns
    case sim::Dataflow::ws: return {1, u.rows, u.cols};
    case sim::Dataflow::os: return {u.rows, 1, u.cols};
    case sim::Dataflow::is: return {u.cols, u.rows, 1};
  }
  return {};
}

int64_t capacity(const sim::ArchSpec& arch, const std::string& buffer) {
  const sim::Buffer* b = arch.find_buffer(buffer);
  return b ? b->bytes : 0;
}

// N tiles are split across cores: among tiles down to 3/4 of the widest, the one that
// gives the busiest core the fewest columns (103 tiles of 40 on 3 cores leave one core 35
// tiles; 114 tiles of 36 give each 38, 2% fewer columns).
int64_t balanced_n_tile(int64_t N, int64_t widest, int64_t step, int64_t cores) {
  int64_t best = widest, best_cols = INT64_MAX;
  for (int64_t tn = widest; tn >= step && tn * 4 >= widest * 3; tn -= step) {
    const int64_t tiles = (N + tn - 1) / tn;
    const int64_t cols = (tiles + cores - 1) / cores * tn;
    if (cols < best_cols) best = tn, best_cols = cols;
  }
  return best;
}

}  // namespace

GemmTiles choose_gemm_tiles(const sim::ArchSpec& arch, int64_t M, int64_t N, int64_t K, int64_t out_bytes) {
  Granule g = granule(arch);
  // Output tile rows must be whole DMA units too: step N by the unit's n0 until a row of
  // the tile is a multiple of the store engine's alignment.
  if (!arch.dma.empty()) {
    const int64_t align = sim::dma_engine_for(arch, sim::Direction::out).alignment;
    const int64_t step = g.n;
    while ((g.n * out_bytes) % align != 0 && g.n < 64 * step) g.n += step;
  }
  const sim::BufferRoles& r = arch.roles;
  const int64_t cap_a = capacity(arch, r.matrix_a), cap_b = capacity(arch, r.matrix_b),
                cap_c = capacity(arch, r.matrix_acc);
  const bool shared = r.matrix_a == r.matrix_b;
  for (bool db : {true, false}) {
    const int64_t copies = db ? 2 : 1;
    int64_t tm = round_up(M, g.m), tk = round_up(K, g.k);
    while (true) {
      // The widest N tile for this (tm, tk): operands (twice when double-buffered) and the
      // int32 accumulator tile must fit.
      int64_t tn_max = cap_c / (4 * tm);
      if (shared) {
        tn_max = std::min(tn_max, (cap_a / copies - tm * tk) / std::max<int64_t>(tk, 1));
      } else {
        if (tm * tk * copies > cap_a) tn_max = 0;
        tn_max = std::min(tn_max, cap_b / (copies * tk));
      }
      const int64_t widest = std::min(round_up(N, g.n), tn_max / g.n * g.n);
      if (widest >= g.n) return GemmTiles{tm, balanced_n_tile(N, widest, g.n, arch.cores), tk, db};
      if (tk > g.k) {
        tk = round_up(tk / 2, g.k);
      } else if (tm > g.m) {
        tm = round_up(tm / 2, g.m);
      } else {
        break;
      }
    }
  }
  return GemmTiles{g.m, g.n, g.k, false};  // the unit's own tile; the rules report the overflow
}

NpuPipeline int8_gemm_npu_pipeline(const sim::ArchSpec& arch, GemmOut out_kind, bool double_buffer) {
  NpuPipeline p;
  p.op = "int8_gemm";
  ImageParam a(Int(8), 2, "a"), w(Int(8), 2, "w");  // (k, m), (k, n)
  Param<int32_t> zp("a_zero_point"), tm("tile_m"), tn("tile_n"), tk("tile_k"), out_zp("out_zero_point");
  Var k("k"), m("m"), n("n");
  Func a_tile("a_tile"), w_tile("w_tile"), acc("acc"), y("int8_gemm_npu");
  // Clamped reads: tiles are guarded, but Halide 14's bounds of the inputs over a tiled,
  // guarded loop can run one tile past the end; clamping keeps the reads in the tensors.
  Expr K = a.dim(0).extent();
  a_tile(k, m) = a(clamp(k, 0, K - 1), clamp(m, 0, a.dim(1).extent() - 1));
  w_tile(k, n) = w(clamp(k, 0, K - 1), clamp(n, 0, w.dim(1).extent() - 1));
  RDom r(0, K, "r");
  acc(n, m) = 0;
  acc(n, m) += (cast<int32_t>(a_tile(r, m)) - zp) * cast<int32_t>(w_tile(r, n));
  p.inputs = {a, w};
  p.ints = {zp, tm, tn, tk, out_zp};
  // Per-channel factors come in with their N tile.
  std::vector<Func> channel_tiles;
  auto channel = [&](Type t, const std::string& name) {
    ImageParam in(t, 1, name);
    Func tile(name + "_tile");
    tile(n) = in(n);
    p.inputs.push_back(in);
    channel_tiles.push_back(tile);
    return tile;
  };
  switch (out_kind) {
    case GemmOut::int32:
      y(n, m) = acc(n, m);
      break;
    case GemmOut::int8_fixed_point: {
      Func mult = channel(Int(32), "multiplier"), shift = channel(Int(32), "shift");
      y(n, m) = ops::requantize_fixed_point(acc(n, m), mult(n), shift(n), out_zp);
      break;
    }
    case GemmOut::int8_float: {
      Func scale = channel(Float(32), "chan_scale");
      y(n, m) = ops::requantize_float(acc(n, m), scale(n), out_zp);
      break;
    }
    case GemmOut::float32:
    case GemmOut::float16: {
      Func scale = channel(Float(32), "chan_scale"), bias = channel(Float(32), "bias");
      const Type out_type = out_kind == GemmOut::float32 ? Float(32) : Float(16);
      // Portable conversion (no F16C bitcode to link into a JIT pipeline), NaN kept a NaN.
      const Target portable(Target::Linux, Target::X86, 64);
      y(n, m) = ops::narrow_from_f32(cast<float>(acc(n, m)) * scale(n) + bias(n), out_type, portable);
      break;
    }
  }

  // Output tiles: N tiles outermost and split across cores, M tiles inside them.
  Var no("no"), ni("ni"), mo("mo"), mi("mi");
  y.split(n, no, ni, tn, TailStrategy::GuardWithIf)
      .split(m, mo, mi, tm, TailStrategy::GuardWithIf)
      .reorder(ni, mi, mo, no)
      .parallel(no);
  const sim::BufferRoles& roles = arch.roles;
  p.plan.stage(acc, roles.matrix_acc, LoopLevel(y, mo));
  // One K chunk per step: its operand tiles arrive by DMA, the matrix unit consumes them.
  RVar ro("ro"), ri("ri");
  acc.update().split(r.x, ro, ri, tk, TailStrategy::GuardWithIf).reorder(ri, n, m, ro);
  p.plan.stage(a_tile, roles.matrix_a, LoopLevel(acc, ro), double_buffer, true);
  p.plan.stage(w_tile, roles.matrix_b, LoopLevel(acc, ro), double_buffer, true);
  p.plan.matrix(acc, 1, m.name(), n.name(), ri.name(), sim::Dtype::int8);
  for (Func& t : channel_tiles) p.plan.stage(t, roles.vector, LoopLevel(y, no), false, true);
  p.finish(y);
  return p;
}

}  // namespace npukit::schedules::npu
