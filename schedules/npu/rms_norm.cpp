// The RMSNorm NPU schedule: tiles of whole rows are DMA'd into the vector unit's buffer
// (double-buffered when two copies fit), normalized there (Σx², 1/rms, scale by the
// weight, which is loaded once) and DMA'd back. The algorithm is ops/rms_norm's.
// Registered as npu_schedule_rms_norm() (schedules/npu/npu_schedule.h).
#include <algorithm>
#include <cstdint>

#include "ops/rms_norm.h"
#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

// What the schedule allocates in the vector buffer for tiles of `r` rows: rows padded to
// whole vectors, the weight once, the input tile (twice when double-buffered), the output
// tile, Σx² (fp64) and the two fp32 factors of 1/rms per row.
std::vector<sim::PlannedAllocation> row_tile_allocations(const sim::ArchSpec& arch, int64_t r, int64_t hidden,
                                                         int64_t element_bytes, bool db) {
  const std::string& vb = arch.roles.vector;
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
  const int64_t row = (hidden + lanes - 1) / lanes * lanes * element_bytes;
  return {{vb, row, false}, {vb, r * row, db}, {vb, r * row, false}, {vb, r * 8, false}, {vb, r * 4, false},
          {vb, r * 4, false}};
}

}  // namespace

// x [rows, hidden] and weight [hidden] of `type` (fp32 or fp16), y of the same type.
// Int param tile_rows; float param eps. Vectors of the vector unit's width. fp16 converts
// in portable code (an NPU converts natively; the host run only has to agree with the
// contract, NaN included).
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
  p.inputs = {x, weight};  // named as the op's tensors
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
  p.finish({y}, {"y"});
  return p;
}

const NpuSchedule& npu_schedule_rms_norm() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "rms_norm";
    s.shape = {"rows", "hidden"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"rows", 1}, {"hidden", 4096}};
    s.prefill = {{"rows", 128}, {"hidden", 4096}};
    s.knobs = {{"tile_rows", 1, 2147483647, "rows"}};
    s.variant = [](const std::string& dtype, const Params&, const Shape&) { return dtype; };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const bool db = fixed.at("double_buffer") != 0;
      return rms_norm_npu_pipeline(arch, variant == "float32" ? Float(32) : Float(16), db);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const int64_t hidden = shape.at("hidden"), bytes = variant == "float32" ? 4 : 2;
      const sim::RowTiles t = sim::choose_row_tiles(arch, shape.at("rows"), [&](int64_t r, bool db) {
        return row_tile_allocations(arch, r, hidden, bytes, db);
      });
      return Knobs{{"tile_rows", t.rows}, {"double_buffer", t.double_buffer}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
