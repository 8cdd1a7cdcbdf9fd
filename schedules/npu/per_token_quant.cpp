#include "schedules/npu/per_token_quant.h"

#include <algorithm>
#include <string>

#include "ops/float_convert.h"
#include "ops/per_token_quant.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

QuantTiles choose_quant_tiles(const sim::ArchSpec& arch, int64_t T, int64_t K, int64_t eb) {
  const std::string& vb = arch.roles.vector;
  const sim::Buffer* b = arch.find_buffer(vb);
  if (!b) return QuantTiles{};
  // A tile's scales are one store run of rows × 4 B. A store engine with byte enables
  // writes it at any offset and length (costed as the aligned units it touches); one
  // without needs every tile's run aligned: rows in multiples of alignment / 4.
  const sim::DmaEngine& store = arch.dma_for(sim::DmaDirection::out);
  const int64_t align = store.partial_writes ? 4 : std::max<int64_t>(4, store.alignment);
  const int64_t step = std::min<int64_t>(T, align / 4);
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / eb);
  const int64_t row = (K + lanes - 1) / lanes * lanes * eb;
  auto fits = [&](int64_t r, bool db) {
    return sim::fits_buffers(arch, {{vb, r * row, db}, {vb, r * 4, false}});
  };
  for (bool db : {true, false}) {
    if (!fits(step, db)) continue;
    int64_t most = step;
    while (most + step <= T && fits(most + step, db)) most += step;
    // The tile loop is dealt to the cores: the busiest core's rows set the time (the op is
    // vector-bound). Take the largest tile that gives it the fewest: 512 rows on 3 cores
    // go as 27 tiles of 19 (171 rows on the busiest), not 23 tiles of 23 (8 + 8 + 7 tiles,
    // 184 rows; npukit tune found it). The busiest core has k = ceil(tiles / cores) tiles;
    // when it is the only one with k, it can be the one that has the short last tile.
    const int64_t cores = std::max<int64_t>(1, arch.cores);
    auto busiest = [&](int64_t r) {
      const int64_t n = (T + r - 1) / r, k = (n + cores - 1) / cores;
      const int64_t with_k = n - (k - 1) * cores;
      return with_k >= 2 ? k * r : (k - 1) * r + (T - (n - 1) * r);
    };
    int64_t rows = most;
    for (int64_t r = most; r >= step; r -= step)
      if (busiest(r) < busiest(rows)) rows = r;
    return QuantTiles{rows, db};
  }
  return QuantTiles{step, false};  // does not fit; the capacity rule says by how much
}

NpuPipeline per_token_quant_npu_pipeline(const sim::ArchSpec& arch, Type type, bool double_buffer) {
  NpuPipeline p;
  p.op = "per_token_quant";
  ImageParam a(type, 2, "a");  // (k, t)
  Param<int32_t> tile_rows("tile_rows");
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  Var k("k"), t("t");
  Func a_tile("a_tile"), af("af");
  a_tile(k, t) = a(k, t);
  af(k, t) = ops::widen_to_f32(a_tile(k, t), portable);
  const int lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / 4));
  ops::PerTokenQuant q =
      ops::define_per_token_quant(af, af, a.dim(0).extent(), lanes, ops::Rounding::portable, ops::Division::ieee);
  Func q_out("per_token_quant_q"), s_out("per_token_quant_scale");
  q_out(k, t) = q.q(k, t);
  s_out(t) = q.scale(t);
  p.inputs = {a};
  p.ints = {tile_rows};

  const TailStrategy guard = TailStrategy::GuardWithIf;
  const int a_lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / type.bytes()));
  Var to("to"), ti("ti");
  q_out.split(t, to, ti, tile_rows, guard).parallel(to).vectorize(k, lanes, guard);
  s_out.split(t, to, ti, tile_rows, guard).parallel(to);
  // One loop over the tiles for both outputs: the tile of a arrives once.
  s_out.compute_with(q_out, to);
  const std::string& vb = arch.roles.vector;
  const LoopLevel at(q_out, to);
  p.plan.stage(a_tile, vb, at, double_buffer, true);
  a_tile.bound(k, 0, a.dim(0).extent()).align_storage(k, a_lanes).vectorize(k, a_lanes, guard);
  // The maxima are a vector and a scalar per row: registers. The scales stay in the
  // buffer for q and for their store.
  q.mag_bits.compute_at(at);
  q.mag_part.compute_at(at).vectorize(q.l);
  q.mag_part.update().vectorize(q.l);
  p.plan.stage(q.scale, vb, at);
  // A tile's scales go out as one run of 4 B per row, and its rows are capped by the a rows
  // the buffer holds (about 8 KiB each at K = 4096) far below a burst's worth of scales
  // (64 rows on edge-6tops): no tiling of this op fills the burst. Keeping the scales on
  // chip across tiles would need them stored per group of tiles, which Halide's compute_with
  // cannot express (s_out must sit inside the loop that computes them).
  p.plan.short_runs(s_out, "4 B of scale per row; a tile's rows are capped by its rows of a");

  p.finish({q_out, s_out}, {"q", "scale"});
  return p;
}

const NpuSchedule& npu_schedule_per_token_quant() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "per_token_quant";
    s.shape = {"T", "K"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"T", 1}, {"K", 4096}};
    s.prefill = {{"T", 512}, {"K", 4096}};
    s.knobs = {{"tile_rows", 1, 2147483647, "T"}};
    s.variant = [](const std::string& dtype, const Params&, const Shape&) { return dtype; };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const bool db = fixed.at("double_buffer") != 0;
      return per_token_quant_npu_pipeline(arch, variant == "float32" ? Float(32) : Float(16), db);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const QuantTiles t = choose_quant_tiles(arch, shape.at("T"), shape.at("K"), variant == "float32" ? 4 : 2);
      return Knobs{{"tile_rows", t.rows}, {"double_buffer", t.double_buffer}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
