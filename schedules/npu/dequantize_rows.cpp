#include "schedules/npu/dequantize_rows.h"

#include <algorithm>
#include <string>

#include "ops/float_convert.h"
#include "ops/per_token_quant.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

DequantTiles choose_dequant_tiles(const sim::ArchSpec& arch, int64_t M, int64_t N, int64_t out_eb) {
  const std::string& vb = arch.roles.vector;
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / 4);
  auto fits = [&](int64_t tm, int64_t tn, bool db) {
    const int64_t row = (tn + lanes - 1) / lanes * lanes * 4;
    return sim::fits_buffers(arch, {{vb, tm * row, db}, {vb, row, false}});
  };
  // Column tiles in whole vectors whose int32 loads and output stores are whole bursts
  // where N allows (the tiles' rows are separate DMA runs).
  int64_t step = lanes;
  for (const sim::DmaEngine& e : arch.dma) {
    const int64_t bytes = std::max<int64_t>(1, e.burst_bytes);
    for (int64_t eb : {int64_t(4), out_eb}) {
      int64_t s = step;
      while ((s * eb) % bytes != 0 && s < 64 * step) s += step;
      if ((s * eb) % bytes == 0 && s <= N) step = s;
    }
  }
  const int64_t cores = std::max<int64_t>(1, arch.cores);
  for (bool db : {true, false}) {
    if (!fits(1, std::min<int64_t>(N, step), db)) continue;
    int64_t tn = N, tm = M;
    while (tn > step && !fits(1, tn, db)) tn = std::max(step, (tn / 2 + step - 1) / step * step);
    while (tm > 1 && !fits(tm, tn, db)) tm = (tm + 1) / 2;
    // Every core a tile: fewer rows first, then narrower column tiles (whole steps).
    auto tiles = [&] { return ((M + tm - 1) / tm) * ((N + tn - 1) / tn); };
    while (tiles() < cores && tm > 1) tm = (tm + 1) / 2;
    while (tiles() < cores && tn > step) tn = std::max(step, (tn / 2 + step - 1) / step * step);
    return DequantTiles{tm, tn, db};
  }
  return DequantTiles{};  // does not fit; the capacity rule says by how much
}

NpuPipeline dequantize_rows_npu_pipeline(const sim::ArchSpec& arch, Type out, bool double_buffer) {
  NpuPipeline p;
  p.op = "dequantize_rows";
  ImageParam acc(Int(32), 2, "acc"), row_scale(Float(32), 1, "row_scale"), chan_scale(Float(32), 1, "chan_scale");
  Param<int32_t> tile_m("tile_m"), tile_n("tile_n");
  p.inputs = {acc, row_scale, chan_scale};
  p.ints = {tile_m, tile_n};
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  const TailStrategy guard = TailStrategy::GuardWithIf;
  Var n("n"), m("m"), no("no"), ni("ni"), mo("mo"), mi("mi"), tile("tile");
  Func a_tile("acc_tile"), cs("chan_scale_tile"), y("dequantize_rows_npu");
  a_tile(n, m) = acc(n, m);
  cs(n) = chan_scale(n);
  // A row's scale is one scalar (4 B): the core's scalar unit reads it, as it reads
  // RoPE's positions; a DMA of 4 B would be below every preset's alignment.
  y(n, m) = ops::narrow_from_f32(ops::dequantize(a_tile(n, m), row_scale(m), cs(n)), out, portable);
  const int lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / 4));
  y.split(n, no, ni, tile_n, guard).split(m, mo, mi, tile_m, guard).reorder(ni, mi, no, mo).fuse(no, mo, tile);
  y.parallel(tile).vectorize(ni, lanes, guard);
  const std::string& vb = arch.roles.vector;
  const LoopLevel at(y, tile);
  p.plan.stage(a_tile, vb, at, double_buffer, true);
  p.plan.stage(cs, vb, at, false, true);
  a_tile.align_storage(n, lanes).vectorize(n, lanes, guard);
  cs.align_storage(n, lanes).vectorize(n, lanes, guard);
  p.finish({y}, {"y"});
  return p;
}

const NpuSchedule& npu_stage_dequantize_rows() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "dequantize_rows";
    s.stage_only = true;
    s.shape = {"M", "N"};
    s.dtypes = {"float32", "float16"};
    s.decode = {{"M", 1}, {"N", 4096}};
    s.prefill = {{"M", 128}, {"N", 4096}};
    s.knobs = {{"tile_m", 1, 2147483647, "M"}, {"tile_n", 1, 2147483647, "N"}};
    s.variant = [](const std::string& dtype, const Params&, const Shape&) { return dtype; };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      return dequantize_rows_npu_pipeline(arch, variant == "float16" ? Float(16) : Float(32),
                                          fixed.at("double_buffer") != 0);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const DequantTiles t = choose_dequant_tiles(arch, shape.at("M"), shape.at("N"), variant == "float16" ? 2 : 4);
      return Knobs{{"tile_m", t.m}, {"tile_n", t.n}, {"double_buffer", t.double_buffer}};
    };
    s.extra_extents = [](const Shape& shape) {
      const int64_t M = shape.at("M"), N = shape.at("N");
      return std::map<std::string, std::vector<int64_t>>{
          {"acc", {N, M}}, {"row_scale", {M}}, {"chan_scale", {N}}, {"y", {N, M}}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
