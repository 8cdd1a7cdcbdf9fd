#include "schedules/npu/rope.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

#include "ops/float_convert.h"
#include "ops/rope.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/rules/footprint.h"

namespace npukit::schedules::npu {

using namespace Halide;

namespace {

int64_t vector_lanes(const sim::ArchSpec& arch, int64_t element_bytes) {
  return std::max<int64_t>(1, static_cast<int64_t>(arch.vector.bytes_per_cycle) / element_bytes);
}

}  // namespace

RopeTiles choose_rope_tiles(const sim::ArchSpec& arch, int64_t tokens, int64_t heads, int64_t head_dim,
                            int64_t rotary_dim, int64_t element_bytes) {
  const std::string& vb = arch.roles.vector;
  const sim::Buffer* b = arch.find_buffer(vb);
  if (!b) return RopeTiles{};
  // What the schedule allocates, counted as the capacity rule counts it: rows padded to
  // whole vectors (x tile in its storage type, the rotated tile in fp32), (cos, sin) fp32
  // per token and pair, inv_freq fp64 per pair once.
  const int64_t row_x = (head_dim + vector_lanes(arch, element_bytes) - 1) / vector_lanes(arch, element_bytes) *
                        vector_lanes(arch, element_bytes) * element_bytes;
  const int64_t lanes32 = vector_lanes(arch, 4);
  const int64_t row_f = (head_dim + lanes32 - 1) / lanes32 * lanes32 * 4;
  const int64_t pairs = (rotary_dim / 2 + lanes32 - 1) / lanes32 * lanes32;
  auto fits = [&](int64_t tt, int64_t th, bool db) {
    return sim::fits_buffers(arch, {{vb, tt * th * row_x, db},
                                    {vb, tt * th * row_f, false},
                                    {vb, tt * pairs * 4, false},  // cos
                                    {vb, tt * pairs * 4, false},  // sin
                                    {vb, pairs * 8, false}});     // inv_freq
  };
  for (bool db : {true, false}) {
    if (!fits(1, 1, db)) continue;
    int64_t th = heads;
    while (th > 1 && !fits(1, th, db)) th = (th + 1) / 2;
    int64_t tt = 1;
    if (th == heads) tt = sim::most_that_fit(1, tokens, [&](int64_t t) { return fits(t, th, db); });
    // Enough tiles for every core: a decode step (one token) splits its heads; a prefill
    // splits its tokens. Each tile stays large enough that a DMA setup is small beside it.
    // A tile's run (its rows are back to back in DRAM) stays at least one load burst:
    // shorter runs waste the rest of the burst.
    const int64_t cores = std::max<int64_t>(1, arch.cores);
    int64_t burst = 1;  // the largest of the engines' bursts: whichever carries the tile
    for (const sim::DmaEngine& e : arch.dma) burst = std::max(burst, e.burst_bytes);
    const int64_t row_bytes = head_dim * element_bytes;
    auto run_ok = [&](int64_t rows) { return rows * row_bytes >= burst; };
    // Heads per tile rounded up to whole bursts of the tile's run (rows back to back).
    const int64_t head_step = burst / std::gcd(burst, std::max<int64_t>(1, row_bytes));
    auto whole_bursts = [&](int64_t h) { return std::min(heads, (h + head_step - 1) / head_step * head_step); };
    // The tile (at most `fit`) that deals `extent` to the cores in whole rounds: 32 heads on
    // 3 cores go as 11 + 11 + 10, not 8 + 8 + 8 + 8 in two rounds (npukit tune found it).
    // A prefill wants several rounds per core as well, so that the first load and the last
    // store (which nothing overlaps) are a small share: up to 8 while each core still gets
    // two tokens a round (npukit tune on ascend-910b-like, 512 tokens: 4.4% from the best
    // found instead of 5.8% with one round of the largest tiles).
    auto balanced = [&](int64_t extent, int64_t fit, int64_t rounds) {
      int64_t tiles = std::max<int64_t>(rounds * cores, (extent + fit - 1) / fit);
      tiles = (tiles + cores - 1) / cores * cores;
      return std::max<int64_t>(1, (extent + tiles - 1) / tiles);
    };
    if (tokens == 1 || tt == 1) {
      const int64_t b = whole_bursts(balanced(heads, th, 1));
      if (run_ok(b) && b <= th) th = b;
    } else {
      const int64_t b = balanced(tokens, tt, std::clamp<int64_t>(tokens / cores / 2, 1, 8));
      if (run_ok(b * th)) tt = b;
      // Fewer token tiles than cores (8 tokens on 24): split the heads among the rest.
      const int64_t token_tiles = (tokens + tt - 1) / tt;
      if (token_tiles < cores) {
        const int64_t per = (cores + token_tiles - 1) / token_tiles;
        const int64_t h = whole_bursts((heads + per - 1) / per);
        if (run_ok(tt * h)) th = std::min(th, h);
      }
    }
    return RopeTiles{tt, th, db};
  }
  return RopeTiles{};  // does not fit; the capacity rule says by how much
}

NpuPipeline rope_npu_pipeline(const sim::ArchSpec& arch, Type type, bool interleaved, int rotary_dim_or_0,
                              bool double_buffer) {
  NpuPipeline p;
  p.op = "rope";
  ImageParam x(type, 3, "x");                  // (d, h, t)
  ImageParam positions(Int(32), 1, "positions");
  Param<int32_t> tile_tokens("tile_tokens"), tile_heads("tile_heads");
  // A constant of the variant (0: the whole head), so that the half style's second-half
  // offset x[i + rotary_dim/2] is a constant whose alignment Halide can prove.
  Expr rotary_dim = rotary_dim_or_0 == 0 ? x.dim(0).extent() : Expr(rotary_dim_or_0);
  Param<float> theta("theta");
  const Target portable(Target::Linux, Target::X86, 64);  // no F16C: no linked bitcode needed
  Var d("d"), h("h"), t("t");
  Func x_tile("x_tile"), xf("xf"), y("rope_npu");
  x_tile(d, h, t) = x(d, h, t);
  xf(d, h, t) = ops::widen_to_f32(x_tile(d, h, t), portable);
  ops::RopeAngles angles = ops::rope_angles(positions, cast<double>(theta), rotary_dim);
  ops::Rope rope = ops::apply_rope(xf, angles, interleaved ? ops::RopeStyle::interleaved : ops::RopeStyle::half,
                                   rotary_dim);
  y(d, h, t) = ops::narrow_from_f32(rope.out(d, h, t), type, portable);
  p.inputs = {x, positions};
  p.ints = {tile_tokens, tile_heads};
  p.floats = {theta};

  // Tiles of tokens × heads, both in one loop split across cores: a decode step has one
  // token, so its heads must be what the cores share.
  const int lanes = static_cast<int>(vector_lanes(arch, type.bytes()));
  const int lanes32 = static_cast<int>(vector_lanes(arch, 4));
  const TailStrategy guard = TailStrategy::GuardWithIf;
  Var to("to"), ti("ti"), ho("ho"), hi("hi"), tile("tile");
  y.split(t, to, ti, tile_tokens, guard)
      .split(h, ho, hi, tile_heads, guard)
      .reorder(d, hi, ti, ho, to)
      .fuse(ho, to, tile)
      .parallel(tile)
      .vectorize(d, lanes, guard);
  const std::string& vb = arch.roles.vector;
  p.plan.stage(x_tile, vb, LoopLevel(y, tile), double_buffer, true);
  // Whole rows start at 0: saying so lets Halide prove the rows' vector accesses aligned
  // (with a symbolic row start it proves nothing, and the rules would see misalignment).
  x_tile.bound(d, 0, x.dim(0).extent()).align_storage(d, lanes).vectorize(d, lanes, guard);
  // (cos, sin) of the tile's tokens on the vector unit; inv_freq (rotary_dim / 2 values)
  // once for the op. Both are stored padded to whole vectors.
  p.plan.stage(angles.cos_sin, vb, LoopLevel(y, tile));
  angles.cos_sin.align_storage(angles.i, lanes32).vectorize(angles.i, lanes32, guard);
  p.plan.stage(angles.inv_freq, vb, LoopLevel::root());
  angles.inv_freq.align_storage(angles.i, lanes32).vectorize(angles.i, lanes32, guard);
  // The rotated tile in fp32, rows padded to whole vectors so that every row starts aligned.
  p.plan.stage(rope.out, vb, LoopLevel(y, tile));
  rope.out.bound(rope.d, 0, x.dim(0).extent()).align_storage(rope.d, lanes32).vectorize(rope.d, lanes32, guard);
  if (!interleaved) {
    // The half style's two updates write the halves: dense vectors along the pair index.
    rope.out.update(0).vectorize(rope.r.x, lanes32, guard);
    rope.out.update(1).vectorize(rope.r.x, lanes32, guard);
  }
  if (rotary_dim_or_0 == 0) {
    // The whole head: the common head dims get a constant second-half offset; any other
    // runs the general code, whose accesses the rules check as they are.
    for (int hd : {128, 64}) {
      if (interleaved) {
        rope.out.specialize(x.dim(0).extent() == hd);
      } else {
        rope.out.update(0).specialize(x.dim(0).extent() == hd);
        rope.out.update(1).specialize(x.dim(0).extent() == hd);
      }
    }
  }
  p.finish({y}, {"y"});
  return p;
}

namespace {

// The variant: "<dtype>,<style>,<rotary_dim>" (rotary_dim 0 = the whole head).
struct RopeVariant {
  bool f16 = false, interleaved = false;
  int rotary_dim = 0;
};

RopeVariant parse_variant(const std::string& v) {
  RopeVariant r;
  const size_t a = v.find(','), b = v.find(',', a + 1);
  r.f16 = v.substr(0, a) == "float16";
  r.interleaved = v.substr(a + 1, b - a - 1) == "interleaved";
  r.rotary_dim = std::stoi(v.substr(b + 1));
  return r;
}

}  // namespace

const NpuSchedule& npu_schedule_rope() {
  static const NpuSchedule s = [] {
    NpuSchedule s;
    s.op = "rope";
    s.shape = {"tokens", "heads", "head_dim"};
    s.dtypes = {"float16", "float32"};
    s.decode = {{"tokens", 1}, {"heads", 32}, {"head_dim", 128}};
    s.prefill = {{"tokens", 512}, {"heads", 32}, {"head_dim", 128}};
    s.knobs = {{"tile_tokens", 1, 2147483647, "tokens"}, {"tile_heads", 1, 2147483647, "heads"}};
    s.variant = [](const std::string& dtype, const Params& params, const Shape&) {
      const int64_t rd = params.integer("rotary_dim");
      if (rd % 2 != 0) throw std::invalid_argument("rope: rotary_dim = " + std::to_string(rd) + ": must be even");
      return dtype + "," + params.choice("style") + "," + std::to_string(rd);
    };
    s.build = [](const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed) {
      const bool db = fixed.at("double_buffer") != 0;
      const RopeVariant v = parse_variant(variant);
      return rope_npu_pipeline(arch, v.f16 ? Float(16) : Float(32), v.interleaved, v.rotary_dim, db);
    };
    s.choose = [](const sim::ArchSpec& arch, const std::string& variant, const Shape& shape) {
      const RopeVariant v = parse_variant(variant);
      const int64_t hd = shape.at("head_dim");
      const RopeTiles t = choose_rope_tiles(arch, shape.at("tokens"), shape.at("heads"), hd,
                                            v.rotary_dim == 0 ? hd : v.rotary_dim, v.f16 ? 2 : 4);
      return Knobs{{"tile_tokens", t.tokens}, {"tile_heads", t.heads}, {"double_buffer", t.double_buffer}};
    };
    return s;
  }();
  return s;
}

}  // namespace npukit::schedules::npu
