#include "schedules/npu/rms_norm.h"

#include <algorithm>

#include "ops/rms_norm.h"

namespace npukit::schedules::npu {

using namespace Halide;

RowTiles choose_row_tiles(const sim::ArchSpec& arch, int64_t rows, int64_t hidden, int64_t element_bytes) {
  const sim::Buffer* b = arch.find_buffer(arch.roles.vector);
  if (!b) return RowTiles{1, false};
  // What the schedule allocates, counted as the rules count it: rows padded to whole
  // vectors, each allocation rounded up to the buffer's alignment, the input twice when
  // double-buffered; per row also Σx² (fp64) and the two fp32 factors of 1/rms.
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
  const int64_t row = (hidden + lanes - 1) / lanes * lanes * element_bytes;
  auto up = [&](int64_t bytes) { return (bytes + b->alignment - 1) / b->alignment * b->alignment; };
  auto fits = [&](int64_t r, bool db) {
    const int64_t used = up(row) + up(r * row) * (db ? 2 : 1) + up(r * row) + up(r * 8) + 2 * up(r * 4);
    return used <= b->bytes;
  };
  for (bool db : {true, false}) {
    if (!fits(1, db)) continue;
    int64_t lo = 1, hi = rows;  // the most rows that fit
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (fits(mid, db)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return RowTiles{lo, db};
  }
  return RowTiles{1, false};  // does not fit; the capacity rule says by how much
}

NpuPipeline rms_norm_npu_pipeline(const sim::ArchSpec& arch, Type type, bool double_buffer) {
  NpuPipeline p;
  p.op = "rms_norm";
  ImageParam x(type, 2, "x"), weight(type, 1, "weight");  // (h, row), (h)
  Param<int32_t> tile_rows("tile_rows");
  Param<float> eps("eps");
  Var h("h"), row("row");
  Func x_tile("x_tile"), w_tile("weight_tile"), y("rms_norm_npu");
  x_tile(h, row) = x(h, row);
  w_tile(h) = weight(h);
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  ops::RmsNorm op = ops::define_rms_norm(x_tile, w_tile, x.dim(0).extent(), eps, type, portable);
  y(h, row) = op.out(h, row);
  p.inputs = {x, weight};
  p.ints = {tile_rows};
  p.floats = {eps};

  const int lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / type.bytes()));
  Var ro("ro"), ri("ri");
  y.split(row, ro, ri, tile_rows, TailStrategy::GuardWithIf).parallel(ro);
  y.vectorize(h, lanes, TailStrategy::GuardWithIf);
  const std::string& vb = arch.roles.vector;
  p.plan.stage(w_tile, vb, LoopLevel::root(), false, true);
  p.plan.stage(x_tile, vb, LoopLevel(y, ro), double_buffer, true);
  // Rows padded to whole vectors in the buffers, so every row starts aligned.
  x_tile.align_storage(h, lanes).vectorize(h, lanes, TailStrategy::GuardWithIf);
  w_tile.align_storage(h, lanes).vectorize(h, lanes, TailStrategy::GuardWithIf);
  p.plan.stage(op.out, vb, LoopLevel(y, ro));
  op.out.align_storage(h, lanes).vectorize(h, lanes, TailStrategy::GuardWithIf);
  p.plan.stage(op.sumsq, vb, LoopLevel(y, ro));
  p.plan.stage(op.inv_rms, vb, LoopLevel(y, ro));
  p.finish(y);
  return p;
}

}  // namespace npukit::schedules::npu
