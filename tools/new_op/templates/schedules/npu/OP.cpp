// The {{op}} NPU schedule: tiles of whole rows DMA'd into the vector unit's buffer, computed
// there and DMA'd back. Registered as npu_schedule_{{op}}() (schedules/npu/npu_schedule.h).
#include <algorithm>
#include <cstdint>

#include "ops/{{op}}.h"
#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

// What a tile of `r` rows allocates in the vector buffer: its input (twice when
// double-buffered) and its output, rows padded to whole vectors. The tile chooser and the
// capacity rule count with the same function (simulator/rules/footprint.h).
std::vector<sim::PlannedAllocation> tile_allocations(const sim::ArchSpec& arch, int64_t r, int64_t cols,
                                                     int64_t element_bytes, bool db) {
  const std::string& vb = arch.roles.vector;
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
  const int64_t row = (cols + lanes - 1) / lanes * lanes * element_bytes;
  return {{vb, r * row, db}, {vb, r * row, false}};
}

NpuPipeline {{op}}_npu_pipeline(const sim::ArchSpec& arch, Type type, bool double_buffer) {
  NpuPipeline p;
  p.op = "{{op}}";
  ImageParam x(type, 2, "x");  // named as the op's tensors
  Param<int32_t> tile_rows("tile_rows");
  Param<float> alpha("alpha");
  Var c("c"), row("row");
  Func x_tile("x_tile"), y("{{op}}_npu");
  x_tile(c, row) = x(c, row);
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  ops::{{Op}} op = ops::define_{{op}}(x_tile, alpha, type, portable);
  y(c, row) = op.out(c, row);
  p.inputs = {x};
  p.ints = {tile_rows};
  p.floats = {alpha};

  const int lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / type.bytes()));
  Var ro("ro"), ri("ri");
  y.split(row, ro, ri, tile_rows, TailStrategy::GuardWithIf).parallel(ro);
  y.vectorize(c, lanes, TailStrategy::GuardWithIf);
  const std::string& vb = arch.roles.vector;
  p.plan.stage(x_tile, vb, LoopLevel(y, ro), double_buffer, true);
  x_tile.align_storage(c, lanes).vectorize(c, lanes, TailStrategy::GuardWithIf);
  p.plan.stage(op.out, vb, LoopLevel(y, ro));
  op.out.align_storage(c, lanes).vectorize(c, lanes, TailStrategy::GuardWithIf);
  p.finish({y}, {"y"});
  return p;
}

}  // namespace

const NpuSchedule& npu_schedule_{{op}}() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "{{op}}";
    s.shape = {"rows", "cols"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"rows", 1}, {"cols", 4096}};
    s.prefill = {{"rows", 128}, {"cols", 4096}};
    s.knobs = {{"tile_rows", 1, 2147483647, "rows"}};
    s.variant = [](const std::string& dtype, const Params&, const Shape&) { return dtype; };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      return {{op}}_npu_pipeline(arch, variant == "float32" ? Float(32) : Float(16), fixed.at("double_buffer") != 0);
    };
    // The most rows per tile that fit (double-buffered if two copies do), at most
    // ceil(rows / cores) so that every core gets a tile.
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const int64_t cols = shape.at("cols"), bytes = variant == "float32" ? 4 : 2;
      const sim::RowTiles t = sim::choose_row_tiles(arch, shape.at("rows"), [&](int64_t r, bool db) {
        return tile_allocations(arch, r, cols, bytes, db);
      });
      return Knobs{{"tile_rows", t.rows}, {"double_buffer", t.double_buffer}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
