// ops::PrefetchLineSteps: Halide 14 splits a prefetched box into one call per 64 bytes but
// steps the calls by 64 elements; after the pass each line of the box is fetched once.
// Checked on Halide's own lowering of a prefetch directive (so a Halide that changes its
// split shows here first) and on hand-written calls. Compiles nothing, runs on any CPU.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "Halide.h"
#include "ops/prefetch.h"
#include "tests/ir_evaluate.h"

namespace npukit {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// Every prefetch call in a split loop, with that loop (Halide writes the loop around the
// call: For(prefetch_split_<buffer>.0) { Evaluate(prefetch) }).
struct SplitPrefetches : IRGraphVisitor {
  using IRGraphVisitor::visit;
  std::vector<std::pair<const For*, const Call*>> found;
  std::map<std::string, Expr> lets;
  void visit(const LetStmt* op) override {
    lets[op->name] = op->value;
    IRGraphVisitor::visit(op);
  }
  void visit(const For* op) override {
    const Evaluate* e = op->body.as<Evaluate>();
    const Call* c = e ? Call::as_intrinsic(e->value, {Call::prefetch}) : nullptr;
    if (op->name.rfind("prefetch_split_", 0) == 0 && c) found.emplace_back(op, c);
    IRGraphVisitor::visit(op);
  }
};

// Holds what lowering leaves, after any passes added before it.
struct Capture : IRMutator {
  explicit Capture(Stmt* out) : out_(out) {}
  Stmt mutate(const Stmt& s) override { return *out_ = s; }
  using IRMutator::mutate;
  Stmt* out_;
};

// The byte offsets of the lines a prefetch directive fetches in one iteration, as Halide
// lowers it: f(x, y) = in(x, y) over a 256-element-wide `in` of `type`, prefetching row
// y + 1 from f's y loop: the box is that row of `in`, 256 elements.
std::map<int64_t, int> lines_fetched(Type type, bool restep) {
  ImageParam in(type, 2, "in");
  in.dim(0).set_bounds(0, 256);
  in.dim(1).set_stride(256);
  Var x("x"), y("y");
  Func f("f");
  f(x, y) = in(x, y);
  f.prefetch(in, y, y, 1, PrefetchBoundStrategy::NonFaulting);
  Pipeline p(f);
  ops::PrefetchLineSteps* pass = nullptr;
  if (restep) {
    pass = new ops::PrefetchLineSteps();
    p.add_custom_lowering_pass(pass);
  }
  Stmt lowered;
  p.add_custom_lowering_pass(new Capture(&lowered));
  // x86-64 (64-byte lines) whatever the host: lowering only, nothing runs.
  p.compile_to_module({in}, "prefetch_lines", Target("x86-64-linux-no_runtime"));
  if (restep) EXPECT_EQ(pass->restepped, type.bytes() > 1 ? 1 : 0);  // bytes were elements already
  SplitPrefetches found;
  lowered.accept(&found);
  EXPECT_EQ(found.found.size(), 1u) << lowered;
  std::map<int64_t, int> lines;
  if (found.found.size() != 1) return lines;
  const auto [loop, call] = found.found[0];
  // Row 3's iteration of a 256 × 8 f: the box is row 4 of `in`.
  std::map<std::string, Expr> row = found.lets;
  const std::string fn = f.name(), inn = in.name();  // unique in the process: f$1, ...
  for (const auto& [name, value] : std::map<std::string, int>{{fn + ".s0.y.rebased", 3}, {fn + ".min.0", 0},
                                                             {fn + ".extent.0", 256}, {fn + ".min.1", 0},
                                                             {inn + ".min.1", 0}}) {
    row[name] = value;
  }
  const int64_t calls = evaluate(loop->extent, row);
  for (int64_t i = 0; i < calls; ++i) {
    std::map<std::string, Expr> at = row;
    at[loop->name] = Expr(int(i));
    ++lines[evaluate(call->args[1], at) * type.bytes()];
  }
  return lines;
}

TEST(PrefetchLineSteps, HalidesSplitStepsByElementsReadAsBytes) {
  // What the pass corrects: 2-byte elements reach twice the box's width. If a Halide
  // release fixes its split, this fails, and the pass must go (it would halve right steps).
  const std::map<int64_t, int> lines = lines_fetched(Float(16), false);
  ASSERT_EQ(lines.size(), 8u);
  EXPECT_EQ(lines.rbegin()->first - lines.begin()->first, 7 * 128);
}

TEST(PrefetchLineSteps, FetchesEachLineOfTheBoxOnce) {
  for (Type type : {UInt(8), Float(16), Float(32)}) {
    SCOPED_TRACE(type);
    const std::map<int64_t, int> lines = lines_fetched(type, true);
    const int64_t row_bytes = 256 * type.bytes();
    ASSERT_EQ(int64_t(lines.size()), row_bytes / 64);
    int64_t expect = lines.begin()->first;
    EXPECT_EQ(expect % row_bytes, 0);
    for (const auto& [offset, times] : lines) {
      EXPECT_EQ(offset, expect);
      EXPECT_EQ(times, 1) << offset;
      expect += 64;
    }
  }
}

Stmt split_call(Type type, const Expr& offset, const std::string& loop = "prefetch_split_b.0") {
  const Expr call = Call::make(type, Call::prefetch, {Variable::make(Handle(), "b"), offset, 1, 64 / type.bytes()},
                               Call::Intrinsic);
  return For::make(loop, 0, 8, ForType::Serial, DeviceAPI::None, Evaluate::make(call));
}

TEST(PrefetchLineSteps, DividesTheStepByTheElementSize) {
  const Expr i = Variable::make(Int(32), "prefetch_split_b.0"), base = Variable::make(Int(32), "base");
  // A dimension wider than a line per element steps by its stride in bytes (Halide's other case).
  for (auto [type, step, want] : std::vector<std::tuple<Type, int, int>>{
           {Float(16), 64, 32}, {Float(32), 64, 16}, {Float(32), 512, 128}, {UInt(8), 64, 64}}) {
    SCOPED_TRACE(type);
    ops::PrefetchLineSteps pass;
    SplitPrefetches found;
    pass.mutate(split_call(type, base + i * step)).accept(&found);
    ASSERT_EQ(found.found.size(), 1u);
    EXPECT_EQ(pass.restepped, type.bytes() == 1 ? 0 : 1);
    const Expr offset = found.found[0].second->args[1];
    EXPECT_EQ(evaluate(offset, {{"base", 5}, {i.as<Variable>()->name, 0}}), 5);
    EXPECT_EQ(evaluate(offset, {{"base", 5}, {i.as<Variable>()->name, 3}}), 5 + 3 * want);
  }
}

// An innermost stride Halide cannot see (a Func's, or a parameter's) leaves a select on its
// sign in the step.
TEST(PrefetchLineSteps, DividesAStepThatDependsOnTheStride) {
  const Expr i = Variable::make(Int(32), "prefetch_split_b.0"), stride = Variable::make(Int(32), "stride");
  ops::PrefetchLineSteps pass;
  SplitPrefetches found;
  pass.mutate(split_call(Float(16), 7 + i * select(stride < 0, -64, 64))).accept(&found);
  ASSERT_EQ(found.found.size(), 1u);
  EXPECT_EQ(pass.restepped, 1);
  const Expr offset = found.found[0].second->args[1];
  const std::string name = i.as<Variable>()->name;
  EXPECT_EQ(evaluate(offset, {{"stride", 1}, {name, 3}}), 7 + 3 * 32);
  EXPECT_EQ(evaluate(offset, {{"stride", -1}, {name, 3}}), 7 - 3 * 32);
}

TEST(PrefetchLineSteps, LeavesAloneWhatIsNotHalidesSplit) {
  const Expr i = Variable::make(Int(32), "prefetch_split_b.0");
  auto unchanged = [](const Stmt& in, int not_linear) {
    ops::PrefetchLineSteps pass;
    const Stmt out = pass.mutate(in);
    EXPECT_TRUE(equal(out, in)) << out;
    EXPECT_EQ(pass.restepped, 0);
    EXPECT_EQ(pass.not_linear, not_linear);
  };
  // Another loop, or another buffer's split loop.
  unchanged(split_call(Float(16), i * 64, "x"), 0);
  unchanged(split_call(Float(16), i * 64, "prefetch_split_c.0"), 0);
  // An offset that does not grow by a constant step, or by one the element size does not divide.
  unchanged(split_call(Float(16), i * i * 64), 1);
  unchanged(split_call(Float(32), i * 6), 1);
  // An offset that does not name the loop (a let in between would hide it).
  unchanged(split_call(Float(16), Variable::make(Int(32), "t")), 1);
}

}  // namespace
}  // namespace npukit
