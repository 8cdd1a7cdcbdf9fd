// ops::AmxJam, ops::AmxPrefetchNext and ops::AmxZeroApart on hand-written tile IR (the form
// Halide 14's ExtractTileOperations leaves and ops::AmxFuseK widens): where the jam zips two
// iterations into one K loop, and where it must not; which lines the prefetch pass
// fetches; where each accumulator's zeros come from. Runs on any CPU: it inspects IR and compiles nothing. The AMX kernels themselves
// are checked against the definition in int8_gemm_test (AmxTierMatchesTheDefinitionAtTileEdges).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "Halide.h"
#include "ops/amx_jam.h"
#include "ops/amx_prefetch_next.h"
#include "ops/amx_zero_apart.h"
#include "tests/ir_evaluate.h"

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
                       {16, 64, 64, acc_now, tile_load("a", k * 1024), tile_load(b, k * 1024 + v * 65536)},
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

// The prefetch pass's loop, condition and address, found in its output, and whether the
// loop is the first statement of a K loop.
struct Prefetches : IRGraphVisitor {
  using IRGraphVisitor::visit;
  const For* loop = nullptr;
  const IfThenElse* guard = nullptr;
  const Call* prefetch = nullptr;
  bool first_in_k_loop = false;
  void visit(const For* op) override {
    if (op->name.find("amx_prefetch_line") == 0) loop = op;
    if (const auto* b = op->body.as<Block>(); b && b->first.as<For>() &&
                                              b->first.as<For>()->name.find("amx_prefetch_line") == 0) {
      first_in_k_loop = op->name == "k.jam0";  // the jam renames the K loop
    }
    IRGraphVisitor::visit(op);
  }
  void visit(const IfThenElse* op) override { guard = op, IRGraphVisitor::visit(op); }
  void visit(const Call* op) override {
    if (op->is_intrinsic(Call::prefetch)) prefetch = op;
    IRGraphVisitor::visit(op);
  }
};

// Row pairs p in [3, 7) around a jammed pair of channel tiles whose B tiles lie 64 KiB
// apart (64 K steps of 1 KiB): a block of 128 KiB, 2048 lines. Over the 4 · 64 K steps
// (8 lines each), each line of the block `ahead` on (bytes ahead · 131072 up) must be
// prefetched exactly once, nothing else, from the start of the K loop's body. `blocks_ahead`
// is what the pass is given, `bound` binds any variable it names.
void expect_fetches_block_once(const Expr& blocks_ahead, int64_t ahead, const std::map<std::string, Expr>& bound) {
  const Expr v = Variable::make(Int(32), "v");
  ops::AmxJam jam;
  const Stmt jammed = jam.mutate(loop2("v", tile_nest("acc", v, "w", "tiles")));
  ops::AmxPrefetchNext pass("w", 2, blocks_ahead);
  const Stmt out = pass.mutate(For::make("p", 3, 4, ForType::Serial, DeviceAPI::None, jammed));
  ASSERT_EQ(pass.prefetching_loops, 1) << out;
  Prefetches found;
  out.accept(&found);
  ASSERT_TRUE(found.loop && found.guard && found.prefetch) << out;
  EXPECT_TRUE(found.first_in_k_loop) << out;
  EXPECT_EQ(shape_of(out).matmuls, 2) << out;
  ASSERT_EQ(found.prefetch->args.size(), 4u);
  std::map<int64_t, int> fetched;
  for (int p = 3; p < 7; ++p) {
    for (int k = 0; k < 64; ++k) {
      std::map<std::string, Expr> at = bound;
      at["p"] = p, at["k.jam0"] = k;
      const int64_t per = evaluate(found.loop->extent, at);
      EXPECT_EQ(per, 8);
      for (int j = 0; j < per; ++j) {
        at[found.loop->name] = j;
        if (evaluate(found.guard->condition, at)) ++fetched[evaluate(found.prefetch->args[1], at)];
      }
    }
  }
  ASSERT_EQ(fetched.size(), 2048u);
  for (const auto& [offset, times] : fetched) {
    EXPECT_EQ(times, 1) << offset;
    EXPECT_TRUE(offset >= ahead * 131072 && offset < (ahead + 1) * 131072 && offset % 64 == 0) << offset;
  }
}

TEST(AmxPrefetchNext, FetchesEachLineOfTheBlockTwoOnOnce) { expect_fetches_block_once(2, 2, {}); }

// The kernel's distance is its `threads` input, known only when it runs.
TEST(AmxPrefetchNext, FetchesTheBlockARunTimeDistanceOn) {
  const Expr threads = Variable::make(Int(32), "threads");
  for (int t : {1, 3}) {
    SCOPED_TRACE(t);
    expect_fetches_block_once(threads, t, {{"threads", t}});
  }
}

TEST(AmxPrefetchNext, LeavesOtherLoopsAlone) {
  const Expr v = Variable::make(Int(32), "v");
  ops::AmxJam jam;
  const Stmt jammed = jam.mutate(loop2("v", tile_nest("acc", v, "w", "tiles")));
  auto unchanged = [](const std::string& weights, const Stmt& in) {
    ops::AmxPrefetchNext pass(weights, 2, 2);
    const Stmt out = pass.mutate(in);
    EXPECT_EQ(pass.prefetching_loops, 0) << in;
    EXPECT_TRUE(equal(out, in)) << out;
  };
  // Weights from another buffer than the one named.
  unchanged("other", loop2("p", jammed, 4));
  // No serial loop around the K loop: a parallel one is the channel blocks' task loop.
  unchanged("w", For::make("p", 0, 4, ForType::Parallel, DeviceAPI::None, jammed));
  // One channel tile: no block to step over.
  unchanged("w", loop2("p", tile_nest("acc", 0, "w", "tiles"), 4));
  // Two K loops in one pair loop (the jam's fallback): each would fetch the block again.
  unchanged("w", loop2("p", Block::make(jammed, jammed), 4));
}

// The zeroings and the loads that replaced them, by accumulator.
struct Zeroings : IRGraphVisitor {
  using IRGraphVisitor::visit;
  int tile_zeros = 0;
  std::map<std::string, Expr> loads;  // accumulator -> what its first reinterpreted store reads
  void visit(const Store* op) override {
    const Call* c = op->value.as<Call>();
    if (c && c->name == "tile_zero") ++tile_zeros;
    if (c && c->is_intrinsic(Call::reinterpret) && !loads.count(op->name)) loads[op->name] = c->args[0];
    IRGraphVisitor::visit(op);
  }
};

TEST(AmxZeroApart, EachAccumulatorStartsFromItsOwnRowOfZeros) {
  const Expr u = Variable::make(Int(32), "u"), v = Variable::make(Int(32), "v");
  ops::AmxJam jam;
  const Stmt jammed = jam.mutate(loop2("u", loop2("v", tile_nest("acc", v + u * 2, "w", "tiles"))));
  ops::AmxZeroApart pass;
  const Stmt out = pass.mutate(loop2("p", jammed, 4));
  EXPECT_EQ(pass.replaced_zeroings, 4);
  Zeroings z;
  out.accept(&z);
  EXPECT_EQ(z.tile_zeros, 0) << out;
  ASSERT_EQ(z.loads.size(), 4u) << out;
  std::set<int64_t> rows;
  for (const auto& [acc, load] : z.loads) {
    // tile_load(16 rows, 64 bytes, the zeros, the accumulator's row, stride 0), as bytes
    const Call* c = load.as<Call>();
    ASSERT_TRUE(c && c->name == "tile_load" && c->args.size() == 5) << acc << ": " << load;
    EXPECT_EQ(c->type, Int(8, 1024)) << load;
    EXPECT_TRUE(is_const(c->args[0], 16) && is_const(c->args[1], 64) && is_const(c->args[4], 0)) << load;
    const Variable* buffer = c->args[2].as<Variable>();
    EXPECT_TRUE(buffer && buffer->name == "amx_zero_rows") << load;
    const int64_t* offset = as_const_int(c->args[3]);
    ASSERT_NE(offset, nullptr) << load;
    EXPECT_EQ(*offset % 64, 0) << load;
    rows.insert(*offset / 64);
  }
  EXPECT_EQ(rows.size(), 4u) << out;  // four rows: nothing for LLVM to merge
  for (int64_t r : rows) EXPECT_LT(r, ops::AmxZeroApart::kRowsOfZeros);
  // The buffer around the whole statement, on the stack, every word zeroed before the loops.
  const Allocate* zeros = out.as<Allocate>();
  ASSERT_TRUE(zeros && zeros->name == "amx_zero_rows" && zeros->memory_type == MemoryType::Stack) << out;
  EXPECT_EQ(zeros->type, Int(32));
  const int words = ops::AmxZeroApart::kRowsOfZeros * 16;
  ASSERT_EQ(zeros->extents.size(), 1u);
  EXPECT_TRUE(is_const(zeros->extents[0], words)) << zeros->extents[0];
  const Block* body = zeros->body.as<Block>();
  ASSERT_NE(body, nullptr) << out;
  const Store* zero = body->first.as<Store>();
  ASSERT_TRUE(zero && zero->name == "amx_zero_rows") << body->first;
  EXPECT_TRUE(is_const_zero(zero->value) && zero->value.type() == Int(32, words)) << zero->value;
  EXPECT_TRUE(equal(zero->index, Ramp::make(0, 1, words))) << zero->index;
  EXPECT_TRUE(body->rest.as<For>() != nullptr) << body->rest;
}

TEST(AmxZeroApart, LeavesAStatementWithoutZeroingsAsItIs) {
  const Expr k = Variable::make(Int(32), "k");
  const Stmt in = For::make("k", 0, 4, ForType::Serial, DeviceAPI::None,
                            Evaluate::make(Call::make(Int(32), "tile_store",
                                                      {16, 64, Variable::make(Handle(), "out"), k * 64, 128,
                                                       tile_load("a", k)},
                                                      Call::Intrinsic)));
  ops::AmxZeroApart pass;
  const Stmt out = pass.mutate(in);
  EXPECT_EQ(pass.replaced_zeroings, 0);
  EXPECT_TRUE(out.same_as(in)) << out;
}

}  // namespace
}  // namespace npukit
