// The INT8 GEMM NPU schedule: output tiles of [tile_m, tile_n] accumulate in the matrix
// unit's accumulator buffer over K chunks of tile_k; each chunk's activation tile and
// weight tile are DMA'd into the matrix operand buffers (double-buffered when both copies
// fit); the finished tile goes back to DRAM, requantized on the way for int8 outputs.
// Tile sizes are pipeline parameters chosen per shape by choose_gemm_tiles.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "layouts/nz.h"
#include "ops/float_convert.h"
#include "ops/int8_gemm.h"
#include "runtime/ops/int8_gemm_channels.h"
#include "schedules/npu/matrix_granule.h"
#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

// The output stage, as the op's `out` and `rounding` parameters choose it.
enum class GemmOut { int32, int8_fixed_point, int8_float, float32, float16 };

struct GemmTiles {
  int64_t m = 1, n = 1, k = 1;
  bool double_buffer = false;
};

using namespace Halide;

namespace {

int64_t round_up(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

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

// Whether the int8_gemm schedule copies the accumulator tile into the vector buffer
// before the epilogue (the arch's accumulator buffer is not readable by the vector unit).
bool stages_acc_for_vector(const sim::ArchSpec& arch, GemmOut out) {
  const sim::Buffer* acc = arch.find_buffer(arch.roles.matrix_acc);
  return out != GemmOut::int32 && acc && !acc->read_by(sim::Unit::vector);
}

namespace {

// Bytes per output channel of the per-channel factor tiles an output stage stages.
int64_t channel_bytes(GemmOut out) {
  switch (out) {
    case GemmOut::int32: return 0;
    case GemmOut::int8_float: return 4;
    default: return 8;  // multiplier + shift, or scale + bias
  }
}

int64_t out_bytes(GemmOut out) {
  return out == GemmOut::int32 || out == GemmOut::float32 ? 4 : out == GemmOut::float16 ? 2 : 1;
}

// What the schedule allocates for tiles (tm, tn, tk): the operand tiles (twice when
// double-buffered), the accumulator, the per-channel factor tiles and, where the vector
// unit cannot read the accumulator, its copy for the epilogue.
std::vector<sim::PlannedAllocation> gemm_tile_allocations(const sim::ArchSpec& arch, GemmOut out, int64_t tm,
                                                          int64_t tn, int64_t tk, bool db) {
  const sim::BufferRoles& r = arch.roles;
  std::vector<sim::PlannedAllocation> v = {{r.matrix_a, tm * tk, db}, {r.matrix_b, tk * tn, db}, {r.matrix_acc, tm * tn * 4, false}};
  for (int64_t c = 0; c < channel_bytes(out) / 4; ++c) v.push_back({r.vector, tn * 4, false});
  if (stages_acc_for_vector(arch, out)) v.push_back({r.vector, tm * tn * 4, false});
  return v;
}

bool fits(const sim::ArchSpec& arch, GemmOut out, int64_t tm, int64_t tn, int64_t tk, bool db) {
  return sim::fits_buffers(arch, gemm_tile_allocations(arch, out, tm, tn, tk, db));
}

}  // namespace

// Tiles in multiples of the matrix unit's shape that fit the arch's buffers.
// Every buffer is counted as the rules count it (alignment rounding, two copies when
// double-buffered, the per-channel factor tiles and, where the accumulator buffer is not
// readable by the vector unit, the accumulator's copy for the epilogue). Among the shapes
// that fit, the one that moves the fewest DRAM bytes (activations reload per N tile,
// weights per M tile; DMA setups and burst waste counted as bytes). Double-buffered when
// anything fits that way. N tiles keep output rows whole multiples of the store DMA's
// alignment and are balanced across cores.
GemmTiles choose_gemm_tiles(const sim::ArchSpec& arch, int64_t M, int64_t N, int64_t K, GemmOut out) {
  Granule g = matrix_granule(arch, sim::Dtype::int8);
  const sim::DmaEngine* load = arch.dma.empty() ? nullptr : &arch.dma_for(sim::DmaDirection::in);
  // Runs of whole DMA bursts waste nothing: step N by the unit's n0 until a row of the
  // output tile is a multiple of the store engine's burst (at least of its alignment, which
  // the rules require), and K until a row of the operand tiles is a multiple of the load
  // engine's burst, as far as the shape allows.
  auto widen = [](int64_t step, int64_t bytes_per, int64_t unit, int64_t limit) {
    int64_t g = step;
    while ((g * bytes_per) % unit != 0 && g < 64 * step) g += step;
    return (g * bytes_per) % unit == 0 && g <= limit ? g : step;
  };
  if (!arch.dma.empty()) {
    const sim::DmaEngine& store = arch.dma_for(sim::DmaDirection::out);
    const int64_t aligned = widen(g.n, out_bytes(out), store.alignment, INT64_MAX);
    const int64_t bursts = widen(aligned, out_bytes(out), std::max<int64_t>(1, store.burst_bytes), round_up(N, aligned));
    g.n = bursts;
    if (load) g.k = widen(g.k, 1, std::max<int64_t>(1, load->burst_bytes), round_up(K, g.k));
  }
  // Among tile shapes that fit, the one that moves the fewest DRAM bytes: activations are
  // reloaded for every N tile, weights for every M tile; a transfer also costs its DMA
  // setup, and runs shorter than a burst waste the rest of it.
  const double burst = load ? static_cast<double>(load->burst_bytes) : 1.0;
  const double setup_bytes = load ? load->setup_cycles * load->bytes_per_cycle : 0.0;
  for (bool db : {true, false}) {
    GemmTiles best;
    double best_cost = -1;
    for (int64_t tm : tile_halvings(M, g.m)) {
      for (int64_t tk : tile_halvings(K, g.k)) {
        if (!fits(arch, out, tm, g.n, tk, db)) continue;
        int64_t lo = g.n, hi = round_up(N, g.n);  // the widest N tile that fits
        while (lo < hi) {
          const int64_t mid = round_up((lo + hi + 1) / 2, g.n);
          if (mid > hi) break;
          if (fits(arch, out, tm, mid, tk, db)) {
            lo = mid;
          } else {
            hi = mid - g.n;
          }
        }
        const int64_t tn = lo;
        const double n_tiles = std::ceil(double(N) / tn), m_tiles = std::ceil(double(M) / tm),
                     k_tiles = std::ceil(double(K) / tk);
        const double run_waste = std::ceil(tk / burst) * burst / tk;
        const double bytes = double(M) * K * n_tiles * run_waste + double(N) * K * m_tiles * run_waste;
        const double cost = bytes + 2 * n_tiles * m_tiles * k_tiles * setup_bytes;
        if (best_cost < 0 || cost < best_cost) {
          best_cost = cost;
          best = GemmTiles{tm, tn, tk, db};
        }
      }
    }
    if (best_cost >= 0) {
      best.n = balanced_n_tile(N, best.n, g.n, arch.cores);
      return best;
    }
  }
  return GemmTiles{g.m, g.n, g.k, false};  // the unit's own tile; the rules report the overflow
}

// Inputs a [M, K] int8 (Halide (k, m)), w [N, K] int8 ((k, n)), then per channel [N]:
// multiplier and shift (int32) for int8_fixed_point, chan_scale (fp32) for int8_float,
// chan_scale and bias (fp32) for float32/float16 (the op entry computes them as the CPU
// path does). Int params: a_zero_point, tile_m, tile_n, tile_k, out_zero_point.
// Output "int8_gemm_npu" (n, m).
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
  RDom r(0, K, "r");
  // Where the cube reads NZ fractals (Ascend), the operand tiles are stored as them
  // (layouts/nz.h): a 4-D Func over (k in fractal row, row in fractal, fractal row block,
  // fractal column) has exactly NZ storage, since Halide 14 cannot split a Func's storage.
  // Its rows are the operand's rows (m for a, n for w); padding rows and columns of a
  // partial fractal hold clamped copies the product never reads.
  const bool nz = arch.matrix.layout == sim::OperandLayout::nz;
  const int k0 = static_cast<int>(layouts::kNzFractalRowBytes);  // int8: one byte per k
  const int r0 = static_cast<int>(layouts::kNzFractalRows);
  Var ki("ki"), ri_("rr"), rb("rb"), kb("kb"), kf("kf");
  std::function<Expr(Expr, Expr)> a_at, w_at;
  if (nz) {
    a_tile(ki, ri_, rb, kb) = a(clamp(kb * k0 + ki, 0, K - 1), clamp(rb * r0 + ri_, 0, a.dim(1).extent() - 1));
    w_tile(ki, ri_, rb, kb) = w(clamp(kb * k0 + ki, 0, K - 1), clamp(rb * r0 + ri_, 0, w.dim(1).extent() - 1));
    a_at = [&](Expr kk, Expr mm) { return a_tile(kk % k0, mm % r0, mm / r0, kk / k0); };
    w_at = [&](Expr kk, Expr nn) { return w_tile(kk % k0, nn % r0, nn / r0, kk / k0); };
  } else {
    a_tile(k, m) = a(clamp(k, 0, K - 1), clamp(m, 0, a.dim(1).extent() - 1));
    w_tile(k, n) = w(clamp(k, 0, K - 1), clamp(n, 0, w.dim(1).extent() - 1));
    a_at = [&](Expr kk, Expr mm) { return a_tile(kk, mm); };
    w_at = [&](Expr kk, Expr nn) { return w_tile(kk, nn); };
  }
  acc(n, m) = 0;
  acc(n, m) += (cast<int32_t>(a_at(r, m)) - zp) * cast<int32_t>(w_at(r, n));
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
  // The epilogue reads the accumulator from a buffer the vector unit can read: a copy in
  // the vector buffer where the accumulator's own buffer is matrix/DMA only (Ascend's L0C).
  Func acc_v("acc_vector"), row_scale("row_scale_tile");
  const bool stage_acc = stages_acc_for_vector(arch, out_kind);
  if (stage_acc) acc_v(n, m) = acc(n, m);
  Func e = stage_acc ? acc_v : acc;
  switch (out_kind) {
    case GemmOut::int32:
      y(n, m) = acc(n, m);
      break;
    case GemmOut::int8_fixed_point: {
      Func mult = channel(Int(32), "multiplier"), shift = channel(Int(32), "shift");
      y(n, m) = ops::requantize_fixed_point(e(n, m), mult(n), shift(n), out_zp);
      break;
    }
    case GemmOut::int8_float: {
      Func scale = channel(Float(32), "chan_scale");
      y(n, m) = ops::requantize_float(e(n, m), scale(n), out_zp, ops::Rounding::portable);
      break;
    }
    case GemmOut::float32:
    case GemmOut::float16: {
      Func scale = channel(Float(32), "chan_scale"), bias = channel(Float(32), "bias");
      // The per-row activation scales (ones for a single a_scale) come in with their M tile.
      ImageParam rows_in(Float(32), 1, "row_scale");
      row_scale(m) = rows_in(m);
      p.inputs.push_back(rows_in);
      const Type out_type = out_kind == GemmOut::float32 ? Float(32) : Float(16);
      // Portable conversion (no F16C bitcode to link into a JIT pipeline), NaN kept a NaN.
      const Target portable(Target::Linux, Target::X86, 64);
      y(n, m) = ops::narrow_from_f32(cast<float>(e(n, m)) * (row_scale(m) * scale(n)) + bias(n), out_type, portable);
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
  if (nz) {
    // The DMA walks each operand row's K run in DRAM order (one loop over the tile's K,
    // fractal column outside the k within it) and scatters it into 32-byte fractal rows.
    for (Func f : {a_tile, w_tile}) {
      f.reorder(ki, kb, ri_, rb).fuse(ki, kb, kf);
      p.plan.nz(f, layouts::kNzFractalRowBytes);
    }
  }
  p.plan.matrix(acc, 1, m.name(), n.name(), ri.name(), sim::Dtype::int8, {a.dim(1).extent(), w.dim(1).extent(), K});
  for (Func& t : channel_tiles) p.plan.stage(t, roles.vector, LoopLevel(y, no), false, true);
  if (row_scale.defined()) p.plan.stage(row_scale, roles.vector, LoopLevel(y, mo), false, true);
  if (stage_acc) p.plan.stage(acc_v, roles.vector, LoopLevel(y, mo));
  p.finish({y}, {"y"});
  return p;
}

namespace {

// The variant names of the output stages: the op's `out`, and for out=int8 its rounding.
GemmOut gemm_out(const std::string& variant) {
  if (variant == "int32") return GemmOut::int32;
  if (variant == "int8_fixed_point") return GemmOut::int8_fixed_point;
  if (variant == "int8_float") return GemmOut::int8_float;
  if (variant == "float32") return GemmOut::float32;
  if (variant == "float16") return GemmOut::float16;
  throw std::invalid_argument("int8_gemm: no NPU variant " + variant);
}

}  // namespace

const NpuSchedule& npu_schedule_int8_gemm() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "int8_gemm";
    s.shape = {"M", "K", "N"};
    s.dtypes = {"int8"};
    s.decode = {{"M", 1}, {"K", 4096}, {"N", 4096}};
    s.prefill = {{"M", 128}, {"K", 4096}, {"N", 4096}};
    s.knobs = {{"tile_m", 1, 2147483647, "M"}, {"tile_n", 1, 2147483647, "N"}, {"tile_k", 1, 2147483647, "K"}};
    s.variant = [](const std::string&, const Params& p, const Shape&) {
      const std::string& out = p.choice("out");
      return out != "int8" ? out : p.choice("rounding") == "fixed_point" ? "int8_fixed_point" : "int8_float";
    };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const bool db = fixed.at("double_buffer") != 0;
      return int8_gemm_npu_pipeline(arch, gemm_out(variant), db);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const GemmTiles t = choose_gemm_tiles(arch, shape.at("M"), shape.at("N"), shape.at("K"), gemm_out(variant));
      return Knobs{{"tile_m", t.m}, {"tile_n", t.n}, {"tile_k", t.k}, {"double_buffer", t.double_buffer}};
    };
    s.extra_extents = [](const Shape& shape) {
      std::map<std::string, std::vector<int64_t>> e;
      for (const char* name : {"multiplier", "shift", "chan_scale", "bias"}) e[name] = {shape.at("N")};
      e["row_scale"] = {shape.at("M")};
      return e;
    };
    // The per-channel factors, computed from the op's parameters as the CPU path does.
    s.prepare = [](const Call& call, ExtraInputs& extra) {
      const std::string out = call.params.choice("out");
      if (out == "int32") return;
      ScratchFrame frame(call);
      const Int8ChannelFactors f = int8_channel_factors(call, frame);
      const int64_t N = call.dim("N");
      auto put = [&](const char* name, DType t, const void* src) {
        std::memcpy(extra.add_tensor(name, t, {N}), src, static_cast<size_t>(N) * dtype_size(t));
      };
      put("multiplier", DType::int32, f.multiplier);
      put("shift", DType::int32, f.shift);
      put("chan_scale", DType::float32, f.chan_scale);
      put("bias", DType::float32, f.bias);
      if (out == "float32" || out == "float16") {
        const int64_t M = call.dim("M");
        std::memcpy(extra.add_tensor("row_scale", DType::float32, {M}), f.row_scale, static_cast<size_t>(M) * sizeof(float));
      }
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
