// The LayerNorm NPU schedule: tiles of whole rows are DMA'd into the vector unit's buffer
// (double-buffered when two copies fit), normalized there (Σx, Σ(x - mean)², scale by the
// weight and shift by the bias, both loaded once) and DMA'd back. The algorithm is
// ops/layer_norm's. Registered as npu_schedule_layer_norm() (schedules/npu/npu_schedule.h).
#include <algorithm>
#include <cstdint>

#include "ops/layer_norm.h"
#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/arch/arch_spec.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

// What the schedule allocates in the vector buffer for tiles of `r` rows: rows padded to
// whole vectors, the weight and the bias once, the input tile (twice when double-buffered),
// the output tile, and four fp64 values per row (Σx, mean, Σ(x - mean)², 1/std).
std::vector<sim::PlannedAllocation> row_tile_allocations(const sim::ArchSpec& arch, int64_t r, int64_t hidden,
                                                         int64_t element_bytes, bool db) {
  const std::string& vb = arch.roles.vector;
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
  const int64_t row = (hidden + lanes - 1) / lanes * lanes * element_bytes;
  return {{vb, row, false},   {vb, row, false},   {vb, r * row, db},  {vb, r * row, false},
          {vb, r * 8, false}, {vb, r * 8, false}, {vb, r * 8, false}, {vb, r * 8, false}};
}

// x [rows, hidden], weight and bias [hidden] of `type` (fp32 or fp16), y of the same type.
// Int param tile_rows; float param eps. Vectors of the vector unit's width. fp16 converts
// in portable code (an NPU converts natively; the host run only has to agree with the
// contract, NaN included).
NpuPipeline layer_norm_npu_pipeline(const sim::ArchSpec& arch, Type type, bool double_buffer) {
  NpuPipeline p;
  p.op = "layer_norm";
  ImageParam x(type, 2, "x"), weight(type, 1, "weight"), bias(type, 1, "bias");  // (h, row), (h), (h)
  Param<int32_t> tile_rows("tile_rows");
  Param<float> eps("eps");
  Var h("h"), row("row");
  Func x_tile("x_tile"), w_tile("weight_tile"), b_tile("bias_tile"), y("layer_norm_npu");
  x_tile(h, row) = x(h, row);
  w_tile(h) = weight(h);
  b_tile(h) = bias(h);
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  ops::LayerNorm op = ops::define_layer_norm(x_tile, w_tile, b_tile, x.dim(0).extent(), eps, type, portable);
  y(h, row) = op.out(h, row);
  p.inputs = {x, weight, bias};  // named as the op's tensors
  p.ints = {tile_rows};
  p.floats = {eps};

  const int lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / type.bytes()));
  Var ro("ro"), ri("ri");
  y.split(row, ro, ri, tile_rows, TailStrategy::GuardWithIf).parallel(ro);
  y.vectorize(h, lanes, TailStrategy::GuardWithIf);
  const std::string& vb = arch.roles.vector;
  p.plan.stage(w_tile, vb, LoopLevel::root(), false, true);
  p.plan.stage(b_tile, vb, LoopLevel::root(), false, true);
  p.plan.stage(x_tile, vb, LoopLevel(y, ro), double_buffer, true);
  // Rows padded to whole vectors in the buffers, so every row starts aligned.
  for (Func f : {x_tile, w_tile, b_tile}) f.align_storage(h, lanes).vectorize(h, lanes, TailStrategy::GuardWithIf);
  p.plan.stage(op.out, vb, LoopLevel(y, ro));
  op.out.align_storage(h, lanes).vectorize(h, lanes, TailStrategy::GuardWithIf);
  for (Func f : {op.sum, op.mean, op.sqdev, op.inv_std}) p.plan.stage(f, vb, LoopLevel(y, ro));
  p.finish({y}, {"y"});
  return p;
}

}  // namespace

const NpuSchedule& npu_schedule_layer_norm() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "layer_norm";
    s.shape = {"rows", "hidden"};
    s.dtypes = {"float16", "float32"};
    // GPT-2 XL's width at decode, and a 128-token prefill chunk.
    s.decode = {{"rows", 1}, {"hidden", 1600}};
    s.prefill = {{"rows", 128}, {"hidden", 1600}};
    s.knobs = {{"tile_rows", 1, 2147483647, "rows"}};
    s.variant = [](const std::string& dtype, const Params&, const Shape&) { return dtype; };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const bool db = fixed.at("double_buffer") != 0;
      return layer_norm_npu_pipeline(arch, variant == "float32" ? Float(32) : Float(16), db);
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
