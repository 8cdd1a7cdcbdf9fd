#include "schedules/npu/copy_rows.h"

#include <algorithm>
#include <string>

#include "ops/float_convert.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

int64_t row_bytes(const sim::ArchSpec& arch, int64_t row, int64_t eb) {
  const int64_t lanes = std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / eb);
  return (row + lanes - 1) / lanes * lanes * eb;  // rows padded to whole vectors
}

}  // namespace

CopyTiles choose_copy_tiles(const sim::ArchSpec& arch, int64_t a, int64_t b, int64_t row, int64_t eb,
                            int64_t out_eb) {
  const std::string& vb = arch.roles.vector;
  const int64_t rb = row_bytes(arch, row, eb);
  auto fits = [&](int64_t ta, int64_t tb, bool db) { return sim::fits_buffers(arch, {{vb, ta * tb * rb, db}}); };
  const int64_t cores = std::max<int64_t>(1, arch.cores);
  int64_t burst = 1;  // the largest of the engines' bursts: whichever carries the tile
  for (const sim::DmaEngine& e : arch.dma) burst = std::max(burst, e.burst_bytes);
  for (bool db : {true, false}) {
    if (!fits(1, 1, db)) continue;
    int64_t tb = b, ta = a;
    while (tb > 1 && !fits(1, tb, db)) tb = (tb + 1) / 2;
    while (ta > 1 && !fits(ta, tb, db)) ta = (ta + 1) / 2;
    // Every core a tile where the rows allow: split a first (tokens), then b (heads); a
    // tile's destination run (its a rows, back to back) stays at least one burst: shorter
    // runs waste the rest of it.
    auto tiles = [&] { return ((a + ta - 1) / ta) * ((b + tb - 1) / tb); };
    while (tiles() < cores) {
      if (ta > 1 && (ta + 1) / 2 * row * out_eb >= burst) {
        ta = (ta + 1) / 2;
      } else if (tb > 1) {
        tb = (tb + 1) / 2;
      } else {
        break;
      }
    }
    return CopyTiles{ta, tb, db};
  }
  return CopyTiles{};  // does not fit; the capacity rule says by how much
}

NpuPipeline copy_rows_npu_pipeline(const sim::ArchSpec& arch, Type in, Type out, bool double_buffer) {
  NpuPipeline p;
  p.op = "copy_rows";
  ImageParam src(in, 3, "src");  // (d, i, j): row, b, a
  Param<int32_t> tile_a("tile_a"), tile_b("tile_b");
  p.inputs = {src};
  p.ints = {tile_a, tile_b};
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  const TailStrategy guard = TailStrategy::GuardWithIf;
  Var d("d"), i("i"), j("j");
  Func s_tile("src_tile"), dst("copy_rows_npu");
  s_tile(d, i, j) = src(d, i, j);
  // dst (d, j, i) = src (d, i, j): the cache's (d, t, h) from (d, h, t).
  dst(d, j, i) = ops::narrow_from_f32(ops::widen_to_f32(s_tile(d, i, j), portable), out, portable);
  // Tiles of tile_a × tile_b rows in one loop split across cores (a decode step's one
  // token spreads its heads over the cores).
  Var ao("ao"), ai("ai"), bo("bo"), bi("bi"), tile("tile");
  const int lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / std::max(in.bytes(), out.bytes())));
  dst.split(j, ao, ai, tile_a, guard).split(i, bo, bi, tile_b, guard).reorder(d, ai, bi, ao, bo).fuse(ao, bo, tile);
  dst.parallel(tile).vectorize(d, lanes, guard);
  const std::string& vb = arch.roles.vector;
  p.plan.stage(s_tile, vb, LoopLevel(dst, tile), double_buffer, true);
  const int in_lanes = std::max(1, static_cast<int>(arch.vector.bytes_per_cycle / in.bytes()));
  s_tile.bound(d, 0, src.dim(0).extent()).align_storage(d, in_lanes).vectorize(d, in_lanes, guard);
  // dst rows of different b lie apart in DRAM (a cache's kv heads, S_max rows apart): a
  // run is at most one b's tile_a rows, and a decode step writes one row per kv head. The
  // chooser keeps tile_a rows a burst where a allows; the cost model charges every burst.
  p.plan.short_runs(dst, "a run is one kv head's new rows: a decode step's is one cache row");
  p.finish({dst}, {"dst"});
  return p;
}

const NpuSchedule& npu_stage_copy_rows() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "copy_rows";
    s.stage_only = true;
    s.shape = {"a", "b", "row"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"a", 1}, {"b", 8}, {"row", 128}};
    s.prefill = {{"a", 512}, {"b", 8}, {"row", 128}};
    s.knobs = {{"tile_a", 1, 2147483647, "a"}, {"tile_b", 1, 2147483647, "b"}};
    s.params = {{"out", ParamSpec::Kind::choice, "same", 0, 0, {"same", "float32", "float16"}, "dst's dtype; same = src's"}};
    s.variant = [](const std::string& dtype, const Params& p, const Shape&) {
      return dtype + "," + (p.choice("out") == "same" ? dtype : p.choice("out"));
    };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const size_t x = variant.find(',');
      const Type in = variant.substr(0, x) == "float16" ? Float(16) : Float(32);
      const Type out = variant.substr(x + 1) == "float16" ? Float(16) : Float(32);
      return copy_rows_npu_pipeline(arch, in, out, fixed.at("double_buffer") != 0);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const size_t x = variant.find(',');
      const int64_t eb = variant.substr(0, x) == "float16" ? 2 : 4, out_eb = variant.substr(x + 1) == "float16" ? 2 : 4;
      const CopyTiles t = choose_copy_tiles(arch, shape.at("a"), shape.at("b"), shape.at("row"), eb, out_eb);
      return Knobs{{"tile_a", t.a}, {"tile_b", t.b}, {"double_buffer", t.double_buffer}};
    };
    s.extra_extents = [](const Shape& shape) {
      const int64_t a = shape.at("a"), b = shape.at("b"), row = shape.at("row");
      // Innermost first: src (d, i, j) = (row, b, a), dst (d, j, i) = (row, a, b).
      return std::map<std::string, std::vector<int64_t>>{{"src", {row, b, a}}, {"dst", {row, a, b}}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
