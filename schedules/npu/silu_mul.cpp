// The silu_mul NPU schedule: tiles of tokens × FFN columns; each tile's gate and up
// halves are DMA'd into the vector buffer (double-buffered when two copies fit), combined
// there on the vector unit and DMA'd back. The algorithm is ops/silu_mul's. Registered as
// npu_schedule_silu_mul() (schedules/npu/npu_schedule.h).
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "ops/silu_mul.h"
#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

struct SiluMulTiles {
  int64_t tokens = 1, ffn = 1;
  bool double_buffer = false;
};

using namespace Halide;

// Tiles whose two input halves (twice when double-buffered) and output fit the vector
// buffer: whole rows of ffn when they fit, else the most whole vectors (and whole DMA
// bursts) of a row that do; then split further until every core has a tile.
SiluMulTiles choose_silu_mul_tiles(const sim::ArchSpec& arch, int64_t tokens, int64_t ffn, int64_t element_bytes) {
  const std::string& vb = arch.roles.vector;
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
  int64_t burst = 1;  // the largest of the engines' bursts: whichever carries the tile
  for (const sim::DmaEngine& e : arch.dma) burst = std::max(burst, e.burst_bytes);
  // A step of columns is whole vectors and whole bursts, so every tile's runs start aligned.
  const int64_t burst_elems = std::max<int64_t>(1, burst / element_bytes);
  const int64_t step = lanes / std::gcd(lanes, burst_elems) * burst_elems;
  auto padded = [&](int64_t f) { return (f + lanes - 1) / lanes * lanes * element_bytes; };
  auto fits = [&](int64_t tt, int64_t tf, bool db) {
    return sim::fits_buffers(arch, {{vb, tt * 2 * padded(tf), db}, {vb, tt * padded(tf), false}});
  };
  // The most of [1, hi] (in units of `unit`) for which ok(v) holds; ok(unit) holds.
  auto most = [](int64_t unit, int64_t hi, auto ok) {
    int64_t lo = 1, top = std::max<int64_t>(1, hi / unit);
    while (lo < top) {
      const int64_t mid = lo + (top - lo + 1) / 2;
      if (ok(mid * unit)) {
        lo = mid;
      } else {
        top = mid - 1;
      }
    }
    return lo * unit;
  };
  for (bool db : {true, false}) {
    const int64_t first = std::min(ffn, step);
    if (!fits(1, first, db)) continue;
    int64_t tf = fits(1, ffn, db) ? ffn : most(step, ffn, [&](int64_t f) { return fits(1, f, db); });
    int64_t tt = tf == ffn ? most(1, tokens, [&](int64_t t) { return fits(t, tf, db); }) : 1;
    // Every core a tile: tokens first (whole rows are long runs), then columns in steps.
    const int64_t cores = std::max<int64_t>(1, arch.cores);
    tt = std::min(tt, (tokens + cores - 1) / cores);
    const int64_t token_tiles = (tokens + tt - 1) / tt;
    if (token_tiles < cores) {
      const int64_t per = (cores + token_tiles - 1) / token_tiles;
      const int64_t want = (ffn + per - 1) / per;
      tf = std::min(tf, std::max(first, (want + step - 1) / step * step));
    }
    return SiluMulTiles{tt, tf, db};
  }
  return SiluMulTiles{};  // does not fit; the capacity rule says by how much
}

// gate_up [tokens, 2, ffn] of `type` (fp32 or fp16), y [tokens, ffn] of the same type.
// Int params tile_tokens and tile_ffn (columns, rounded down to whole vectors, at least one).
NpuPipeline silu_mul_npu_pipeline(const sim::ArchSpec& arch, Type type, bool double_buffer) {
  NpuPipeline p;
  p.op = "silu_mul";
  ImageParam gate_up(type, 3, "gate_up");  // (f, half, t)
  Param<int32_t> tile_tokens("tile_tokens"), tile_ffn("tile_ffn");
  Var f("f"), half("half"), t("t");
  Func gu_tile("gate_up_tile"), y("silu_mul_npu");
  gu_tile(f, half, t) = gate_up(f, half, t);
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  ops::SiluMul op = ops::define_silu_mul(gu_tile, type, portable);
  y(f, t) = op.out(f, t);
  p.inputs = {gate_up};
  p.ints = {tile_tokens, tile_ffn};

  const int lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / type.bytes()));
  const TailStrategy guard = TailStrategy::GuardWithIf;
  Var fo("fo"), fi("fi"), to("to"), ti("ti"), tile("tile");
  // One loop over tokens × column tiles, split across cores: a decode step has one token,
  // so its columns are what the cores share.
  // tile_ffn in whole vectors, so that Halide can prove every tile's columns start aligned
  // (the chooser picks multiples of the vector; other values are rounded down to one).
  Expr columns = max(tile_ffn / lanes, 1) * lanes;
  y.split(t, to, ti, tile_tokens, guard)
      .split(f, fo, fi, columns, guard)
      .reorder(fi, ti, fo, to)
      .fuse(fo, to, tile)
      .parallel(tile)
      .vectorize(fi, lanes, guard);
  const std::string& vb = arch.roles.vector;
  const LoopLevel at(y, tile);
  p.plan.stage(gu_tile, vb, at, double_buffer, true);
  gu_tile.align_storage(f, lanes).vectorize(f, lanes, guard);
  p.plan.stage(op.out, vb, at);
  op.out.align_storage(op.f, lanes).vectorize(op.f, lanes, guard);
  p.finish({y}, {"y"});
  return p;
}

const NpuSchedule& npu_schedule_silu_mul() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "silu_mul";
    s.shape = {"tokens", "ffn"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"tokens", 1}, {"ffn", 11008}};
    s.prefill = {{"tokens", 128}, {"ffn", 11008}};
    s.knobs = {{"tile_tokens", 1, 2147483647, "tokens"}, {"tile_ffn", 1, 2147483647, "ffn"}};
    s.variant = [](const std::string& dtype, const Params&, const Shape&) { return dtype; };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const bool db = fixed.at("double_buffer") != 0;
      return silu_mul_npu_pipeline(arch, variant == "float32" ? Float(32) : Float(16), db);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const SiluMulTiles t =
          choose_silu_mul_tiles(arch, shape.at("tokens"), shape.at("ffn"), variant == "float32" ? 4 : 2);
      return Knobs{{"tile_tokens", t.tokens}, {"tile_ffn", t.ffn}, {"double_buffer", t.double_buffer}};
    };
    // gate_up's halves dim is no shape dim (it is always 2).
    s.extra_extents = [](const Shape& shape) {
      return std::map<std::string, std::vector<int64_t>>{{"gate_up", {shape.at("ffn"), 2, shape.at("tokens")}}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
