// The add_rms_norm NPU schedule: tiles of whole rows of x and of the residual are DMA'd
// into the vector buffer (in chunks of columns when whole rows do not fit; double-buffered
// when two copies fit), added into the tile's sum, normalized there (rms_norm's Σx², 1/rms
// and scale by the weight, which is loaded once) and y and the sum are DMA'd back; the new
// residual's store runs after the tile's norm in the same loop (compute_with), so the
// in-place update never overtakes a read. The algorithm is ops/add_rms_norm's.
// Registered as npu_schedule_add_rms_norm() (schedules/npu/npu_schedule.h).
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "ops/add_rms_norm.h"
#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

struct AddNormTiles {
  int64_t rows = 1;
  int64_t hidden = 1;  // columns of x and residual per DMA chunk
  bool double_buffer = false;
};

using namespace Halide;

namespace {

int64_t vector_lanes(const sim::ArchSpec& arch, int64_t element_bytes) {
  return std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
}

// What the schedule allocates in the vector buffer for tiles of `r` rows whose x and
// residual arrive in chunks of `c` columns: rows padded to whole vectors, the weight once,
// the x and residual chunks (twice when double-buffered), the tile's sum and y, Σx² (fp64)
// and the two fp32 factors of 1/rms per row.
std::vector<sim::PlannedAllocation> tile_allocations(const sim::ArchSpec& arch, int64_t r, int64_t c, int64_t hidden,
                                                     int64_t element_bytes, bool db) {
  const std::string& vb = arch.roles.vector;
  const int64_t lanes = vector_lanes(arch, element_bytes);
  auto padded = [&](int64_t n) { return (n + lanes - 1) / lanes * lanes * element_bytes; };
  return {{vb, padded(hidden), false}, {vb, r * padded(c), db},  {vb, r * padded(c), db}, {vb, r * padded(hidden), false},
          {vb, r * padded(hidden), false}, {vb, r * 8, false}, {vb, r * 4, false},      {vb, r * 4, false}};
}

}  // namespace

// The most rows per tile whose copies fit the vector buffer next to the weight, but at most
// ceil(rows / cores) so that every core has a tile; at least one row. x and residual come
// as whole rows when one of each fits beside the tile's sum and y, else in the widest
// chunks of whole vectors and DMA bursts that fit.
AddNormTiles choose_add_norm_tiles(const sim::ArchSpec& arch, int64_t rows, int64_t hidden, int64_t element_bytes) {
  auto fits = [&](int64_t r, int64_t c, bool db) {
    return sim::fits_buffers(arch, tile_allocations(arch, r, c, hidden, element_bytes, db));
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
  // Chunks are whole vectors and whole DMA bursts, so that every chunk's runs start aligned.
  const int64_t lanes = vector_lanes(arch, element_bytes);
  int64_t burst = 1;
  for (const sim::DmaEngine& e : arch.dma) burst = std::max(burst, e.burst_bytes);
  const int64_t burst_elems = std::max<int64_t>(1, burst / element_bytes);
  const int64_t step = std::min(hidden, lanes / std::gcd(lanes, burst_elems) * burst_elems);
  for (bool db : {true, false}) {
    if (!fits(1, step, db)) continue;
    // Whole rows of x and residual when one row of each fits, then as many rows as fit;
    // else one row with the widest chunk that fits.
    const int64_t chunk = fits(1, hidden, db) ? hidden : most(step, hidden, [&](int64_t c) { return fits(1, c, db); });
    const int64_t r = chunk == hidden ? most(1, rows, [&](int64_t n) { return fits(n, hidden, db); }) : 1;
    const int64_t per_core = (rows + arch.cores - 1) / arch.cores;  // every core a tile
    return AddNormTiles{std::min(r, per_core), chunk, db};
  }
  return AddNormTiles{1, hidden, false};  // does not fit; the capacity rule says by how much
}

// x, residual [rows, hidden] and weight [hidden] of `type` (fp32 or fp16); y and the new
// residual of the same type. Int params tile_rows, tile_hidden (rounded down to whole
// vectors, at least one); float param eps.
NpuPipeline add_rms_norm_npu_pipeline(const sim::ArchSpec& arch, Type type, bool double_buffer) {
  NpuPipeline p;
  p.op = "add_rms_norm";
  ImageParam x(type, 2, "x"), residual(type, 2, "residual"), weight(type, 1, "weight");  // (h, row), (h)
  Param<int32_t> tile_rows("tile_rows"), tile_hidden("tile_hidden");
  Param<float> eps("eps");
  Var h("h"), row("row");
  Func x_tile("x_tile"), r_tile("residual_tile"), w_tile("weight_tile"), y("add_rms_norm_npu"),
      r_out("add_rms_norm_residual_npu");
  x_tile(h, row) = x(h, row);
  r_tile(h, row) = residual(h, row);
  w_tile(h) = weight(h);
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  ops::AddRmsNorm op = ops::define_add_rms_norm(x_tile, r_tile, w_tile, x.dim(0).extent(), eps, type, type, portable);
  y(h, row) = op.norm.out(h, row);
  // The new residual is stored from the tile's sum, which the norm reads too: no buffer of
  // its own (ops' residual_out serves schedules that write it in place from the inputs).
  r_out(h, row) = op.sum(h, row);
  p.inputs = {x, residual, weight};  // named as the op's tensors
  p.ints = {tile_rows, tile_hidden};
  p.floats = {eps};

  const int lanes = static_cast<int>(vector_lanes(arch, type.bytes()));
  const TailStrategy guard = TailStrategy::GuardWithIf;
  Var ro("ro"), ri("ri"), ho("ho"), hi("hi");
  for (Func f : {y, r_out}) f.split(row, ro, ri, tile_rows, guard).parallel(ro).vectorize(h, lanes, guard);
  // The tile's new residual is stored after its norm, in the same loop: the tile's sum is
  // made once, and the in-place store follows the tile's reads.
  r_out.compute_with(y, ro);
  const std::string& vb = arch.roles.vector;
  const LoopLevel at(y, ro);
  p.plan.stage(w_tile, vb, LoopLevel::root(), false, true);
  w_tile.align_storage(h, lanes).vectorize(h, lanes, guard);
  // The sum of the tile's whole rows, made chunk by chunk of x and residual: rows too wide
  // for all of the tile's copies at once (fp32 rows of 4096 on Gemmini's 64 KiB) still fit.
  // tile_hidden in whole vectors, so that Halide can prove every chunk starts aligned.
  Expr columns = max(tile_hidden / lanes, 1) * lanes;
  p.plan.stage(op.sum, vb, at);
  op.sum.align_storage(h, lanes)
      .split(h, ho, hi, columns, guard)
      .reorder(hi, row, ho)
      .vectorize(hi, lanes, guard);
  const LoopLevel chunk(op.sum, ho);
  p.plan.stage(x_tile, vb, chunk, double_buffer, true);
  p.plan.stage(r_tile, vb, chunk, double_buffer, true);
  for (Func f : {x_tile, r_tile}) f.align_storage(h, lanes).vectorize(h, lanes, guard);
  p.plan.stage(op.norm.out, vb, at);
  op.norm.out.align_storage(op.norm.h, lanes).vectorize(op.norm.h, lanes, guard);
  p.plan.stage(op.norm.sumsq, vb, at);
  p.plan.stage(op.norm.inv_rms, vb, at);
  p.finish({y, r_out}, {"y", "residual"});
  return p;
}

const NpuSchedule& npu_schedule_add_rms_norm() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "add_rms_norm";
    s.shape = {"rows", "hidden"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"rows", 1}, {"hidden", 4096}};
    s.prefill = {{"rows", 128}, {"hidden", 4096}};
    s.knobs = {{"tile_rows", 1, 2147483647, "rows"}, {"tile_hidden", 1, 2147483647, "hidden"}};
    s.variant = [](const std::string& dtype, const Params&, const Shape&) { return dtype; };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const bool db = fixed.at("double_buffer") != 0;
      return add_rms_norm_npu_pipeline(arch, variant == "float32" ? Float(32) : Float(16), db);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const AddNormTiles t =
          choose_add_norm_tiles(arch, shape.at("rows"), shape.at("hidden"), variant == "float32" ? 4 : 2);
      return Knobs{{"tile_rows", t.rows}, {"tile_hidden", t.hidden}, {"double_buffer", t.double_buffer}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
