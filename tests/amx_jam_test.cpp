// ops::AmxJam on hand-written tile IR (the form Halide 14's ExtractTileOperations leaves and
// ops::AmxFuseK widens): where it zips two iterations into one K loop, and where it must
// not. Runs on any CPU: it inspects IR and compiles nothing. The AMX kernels themselves are
// checked against the definition in int8_gemm_test (AmxTierMatchesTheDefinitionAtTileEdges).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "Halide.h"
#include "ops/amx_jam.h"

namespace npukit {
namespace {

using namespace Halide;
using namespace Halide::Internal;

Expr ramp256() { return Ramp::make(0, 1, 256); }

Expr tile_load(const std::string& buffer, Expr offset) {
  return Call::make(Int(8, 1024), "tile_load", {16, 64, Variable::make(Handle(), buffer), std::move(offset), 64},
                    Call::Intrinsic);
}

// One accumulator's nest as ExtractTileOperations writes it: zero, K loop of matmuls, store.
// `v` selects the channel tile; B is read from `b`, the tile stored into `out`.
Stmt tile_nest(const std::string& acc, const Expr& v, const std::string& b, const std::string& out,
               Stmt extra = Stmt()) {
  const Expr acc_now = Load::make(Int(32, 256), acc, ramp256(), Buffer<>(), Parameter(), const_true(256),
                                  ModulusRemainder());
  const Expr k = Variable::make(Int(32), "k");
  Stmt zero = Store::make(acc, Call::make(Int(32, 256), "tile_zero", {16, 64}, Call::Intrinsic), ramp256(), Parameter(),
                          const_true(256), ModulusRemainder());
  Expr mm = Call::make(Int(32, 256), "tile_matmul",
                       {16, 64, 64, acc_now, tile_load("a", k * 1024), tile_load(b, k * 1024 + v * 4096)},
                       Call::Intrinsic);
  Stmt step = Store::make(acc, mm, ramp256(), Parameter(), const_true(256), ModulusRemainder());
  if (extra.defined()) step = Block::make(step, extra);
  Stmt loop = For::make("k", 0, 64, ForType::Serial, DeviceAPI::None, step);
  const Expr out_buffer = Variable::make(Handle(), out);
  Stmt store = Evaluate::make(
      Call::make(Int(32), "tile_store", {16, 64, out_buffer, v * 64, 128, acc_now}, Call::Intrinsic));
  return Allocate::make(acc, Int(32), MemoryType::AMXTile, {256}, const_true(), Block::make({zero, loop, store}));
}

Stmt loop2(const std::string& v, Stmt body, int extent = 2) {
  return For::make(v, 0, extent, ForType::Serial, DeviceAPI::None, std::move(body));
}

struct Shape : IRGraphVisitor {
  using IRGraphVisitor::visit;
  int loops = 0, matmuls = 0;
  std::set<std::string> accumulators;
  void visit(const For* op) override { ++loops, IRGraphVisitor::visit(op); }
  void visit(const Call* op) override {
    matmuls += op->name == "tile_matmul";
    IRGraphVisitor::visit(op);
  }
  void visit(const Allocate* op) override { accumulators.insert(op->name), IRGraphVisitor::visit(op); }
};

Shape shape_of(const Stmt& s) {
  Shape sh;
  s.accept(&sh);
  return sh;
}

TEST(AmxJam, ZipsTwoChannelTilesIntoOneKLoop) {
  const Expr v = Variable::make(Int(32), "v");
  ops::AmxJam jam;
  const Stmt out = jam.mutate(loop2("v", tile_nest("acc", v, "w", "tiles")));
  EXPECT_EQ(jam.jammed_loops, 1);
  const Shape sh = shape_of(out);
  EXPECT_EQ(sh.loops, 1) << out;  // the v loop is gone, the two K loops are one
  EXPECT_EQ(sh.matmuls, 2) << out;
  EXPECT_EQ(sh.accumulators.size(), 2u) << out;
}

TEST(AmxJam, TwoLevelsKeepFourAccumulators) {
  // Row tiles (u) around channel tiles (v): the inner jam runs first, the outer one zips
  // the already zipped nests.
  const Expr u = Variable::make(Int(32), "u"), v = Variable::make(Int(32), "v");
  ops::AmxJam jam;
  const Stmt out = jam.mutate(loop2("u", loop2("v", tile_nest("acc", v + u * 2, "w", "tiles"))));
  EXPECT_EQ(jam.jammed_loops, 2);
  const Shape sh = shape_of(out);
  EXPECT_EQ(sh.loops, 1) << out;
  EXPECT_EQ(sh.matmuls, 4) << out;
  EXPECT_EQ(sh.accumulators.size(), 4u) << out;
}

TEST(AmxJam, LeavesAloneWhatItCannotProveSafeOrUseful) {
  const Expr v = Variable::make(Int(32), "v");
  auto unchanged = [](const Stmt& in) {
    ops::AmxJam jam;
    const Stmt out = jam.mutate(in);
    EXPECT_EQ(jam.jammed_loops, 0) << in;
    EXPECT_TRUE(equal(out, in)) << out;
  };
  // The tiles are stored into the buffer B is read from: iteration 1's loads would run
  // before iteration 0's store.
  unchanged(loop2("v", tile_nest("acc", v, "tiles", "tiles")));
  // Three iterations: only pairs are zipped.
  unchanged(loop2("v", tile_nest("acc", v, "w", "tiles"), 3));
  // A store outside the accumulators.
  const Stmt side = Store::make("log", Expr(1), Expr(0), Parameter(), const_true(), ModulusRemainder());
  unchanged(loop2("v", tile_nest("acc", v, "w", "tiles", side)));
  // No accumulator at all.
  unchanged(loop2("v", side));
  // A parallel loop.
  unchanged(For::make("v", 0, 2, ForType::Parallel, DeviceAPI::None, tile_nest("acc", v, "w", "tiles")));
}

}  // namespace
}  // namespace npukit
