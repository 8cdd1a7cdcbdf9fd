#include "ops/amx_prefetch_next.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

namespace npukit::ops {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// What a loop body holds: the offsets of the weight tiles it loads (tile_load of
// `buffer`), whether it multiplies tiles, whether it has a loop of its own, and the names
// it defines (which an expression placed ahead of the body cannot use).
class BodyFacts : public IRGraphVisitor {
 public:
  explicit BodyFacts(std::string buffer) : buffer_(std::move(buffer)) {}
  using IRGraphVisitor::visit;

  std::vector<Expr> offsets;
  bool has_matmul = false;
  bool nested_loop = false;
  std::set<std::string> defined;

 private:
  std::string buffer_;
  void visit(const Call* op) override {
    if (op->name == "tile_matmul") has_matmul = true;
    if (op->name == "tile_load" && op->args.size() >= 5) {
      if (const auto* b = op->args[2].as<Variable>(); b && b->name == buffer_) offsets.push_back(op->args[3]);
    }
    IRGraphVisitor::visit(op);
  }
  void visit(const For*) override { nested_loop = true; }
  void visit(const LetStmt* op) override { defined.insert(op->name), IRGraphVisitor::visit(op); }
  void visit(const Let* op) override { defined.insert(op->name), IRGraphVisitor::visit(op); }
};

// Whether `f`, whose body `facts` describe, is a K loop: a serial loop whose body loads
// weight tiles for tile matmuls and holds no loop of its own.
bool is_k_loop(const For* f, const BodyFacts& facts) {
  return f->for_type == ForType::Serial && facts.has_matmul && !facts.nested_loop && !facts.offsets.empty();
}

bool is_k_loop(const For* f, const std::string& weights) {
  BodyFacts facts(weights);
  f->body.accept(&facts);
  return is_k_loop(f, facts);
}

// The K loops directly inside a loop (not inside another loop), each occurrence counted
// (an IRVisitor: a graph visitor would count a node shared by two statements once).
class KLoops : public IRVisitor {
 public:
  explicit KLoops(const std::string& weights) : weights_(weights) {}
  using IRVisitor::visit;
  int found = 0;

 private:
  const std::string& weights_;
  void visit(const For* op) override { found += is_k_loop(op, weights_); }
};

// Gives the one K loop directly inside the row-pair loop `pair` its share of the
// prefetches, where its weight offsets can be read ahead of its body and name two or more
// channel tiles.
class AddToKLoop : public IRMutator {
 public:
  AddToKLoop(const For* pair, const std::string& weights, int tiles, Expr ahead)
      : pair_(pair), weights_(weights), tiles_(tiles), ahead_(std::move(ahead)) {}
  using IRMutator::visit;
  int done = 0;

 private:
  const For* pair_;
  const std::string& weights_;
  int tiles_;
  Expr ahead_;
  Stmt visit(const For* op) override {
    BodyFacts facts(weights_);
    op->body.accept(&facts);
    if (!is_k_loop(op, facts)) return op;  // any other loop: not directly inside the pair loop
    // The block's first and last channel tile at the loop's first K step.
    Expr lo, hi;
    for (const Expr& o : facts.offsets) {
      for (const std::string& name : facts.defined) {
        if (expr_uses_var(o, name)) return op;  // not computable ahead of the body
      }
      const Expr at0 = substitute(op->name, op->min, o);
      lo = lo.defined() ? min(lo, at0) : at0;
      hi = hi.defined() ? max(hi, at0) : at0;
    }
    lo = simplify(lo), hi = simplify(hi);
    if (can_prove(lo == hi)) return op;  // one channel tile: no block to step over
    const Expr block = (hi - lo) / (tiles_ - 1) * tiles_;  // bytes of a block's weights
    const Expr start = lo + ahead_ * block;                // the block `ahead_` tasks on
    const Expr lines = block / 64;
    const Expr slots = pair_->extent * op->extent;
    const Expr per = (lines + slots - 1) / slots;
    const Expr slot =
        (Variable::make(Int(32), pair_->name) - pair_->min) * op->extent + (Variable::make(Int(32), op->name) - op->min);
    const std::string j = unique_name("amx_prefetch_line");
    const Expr line = slot * per + Variable::make(Int(32), j);
    const Expr pf = Call::make(Int(8), Call::prefetch, {Variable::make(Handle(), weights_), start + line * 64, 1, 64},
                               Call::Intrinsic);
    const Stmt fetch = For::make(j, 0, per, ForType::Serial, DeviceAPI::None,
                                 IfThenElse::make(line < lines, Evaluate::make(pf)));
    ++done;
    return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, Block::make(fetch, op->body));
  }
};

}  // namespace

Stmt AmxPrefetchNext::visit(const For* op) {
  Stmt body = mutate(op->body);
  // (One tile a block: no distance between tiles to measure a block by.)
  if (op->for_type == ForType::Serial && tiles_per_block_ >= 2 && !is_k_loop(op, weights_)) {
    // Exactly one K loop: where the jam fell back to two loops one after the other, each
    // would fetch the whole block again.
    KLoops k_loops(weights_);
    body.accept(&k_loops);
    if (k_loops.found == 1) {
      AddToKLoop add(op, weights_, tiles_per_block_, blocks_ahead_);
      const Stmt with = add.mutate(body);
      if (add.done) prefetching_loops += add.done, body = with;
    }
  }
  if (body.same_as(op->body)) return op;
  return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
}

}  // namespace npukit::ops
