#include "ops/amx_prefetch_next.h"

#include <string>
#include <utility>
#include <vector>

namespace npukit::ops {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// The offsets of the weight tiles a K loop's body loads (tile_load of `buffer`).
class WeightLoads : public IRGraphVisitor {
 public:
  explicit WeightLoads(std::string buffer) : buffer(std::move(buffer)) {}
  using IRGraphVisitor::visit;
  std::string buffer;
  std::vector<Expr> offsets;
  bool has_matmul = false;

 private:
  void visit(const Call* op) override {
    if (op->name == "tile_matmul") has_matmul = true;
    if (op->name == "tile_load" && op->args.size() >= 5) {
      if (const auto* b = op->args[2].as<Variable>(); b && b->name == buffer) {
        offsets.push_back(op->args[3]);
      }
    }
    IRGraphVisitor::visit(op);
  }
  void visit(const For* op) override { nested_loop = true; }

 public:
  bool nested_loop = false;
};

// Whether `s` is a K loop: a serial loop whose body loads weight tiles for tile matmuls and
// holds no loop of its own.
bool is_k_loop(const For* f, const std::string& weights) {
  if (f->for_type != ForType::Serial) return false;
  WeightLoads w(weights);
  f->body.accept(&w);
  return w.has_matmul && !w.nested_loop && !w.offsets.empty();
}

// Adds the prefetches to the K loops directly inside a row-pair loop `pair` (not inside
// another loop).
class AddToKLoop : public IRMutator {
 public:
  AddToKLoop(const For* pair, const std::string& weights) : pair_(pair), weights_(weights) {}
  using IRMutator::visit;
  int done = 0;

 private:
  const For* pair_;
  const std::string& weights_;
  Stmt visit(const For* op) override {
    if (!is_k_loop(op, weights_)) return op;  // any other loop: not directly inside the pair loop
    WeightLoads w(weights_);
    op->body.accept(&w);
    const Expr k = Variable::make(Int(32), op->name);
    // The block's first and last tile at K step 0: its channel tiles are stride.3 apart.
    Expr lo = simplify(substitute(op->name, op->min, w.offsets[0])), hi = lo;
    for (const Expr& o : w.offsets) {
      const Expr at0 = simplify(substitute(op->name, op->min, o));
      lo = min(lo, at0), hi = max(hi, at0);
    }
    const Expr tile = hi - lo;              // bytes between the block's two channel tiles
    const Expr block = 2 * tile;            // bytes of the block's weights
    const Expr ahead = lo + 2 * block;      // the block two tasks on
    const Expr lines = block / 64;
    const Expr slots = pair_->extent * op->extent;
    const Expr per = (lines + slots - 1) / slots;
    const Expr slot = (Variable::make(Int(32), pair_->name) - pair_->min) * op->extent + (k - op->min);
    const std::string j = unique_name("amx_prefetch_line");
    const Expr line = slot * per + Variable::make(Int(32), j);
    const Expr pf = Call::make(Int(8), Call::prefetch,
                               {Variable::make(Handle(), w.buffer), ahead + line * 64, 1, 64}, Call::Intrinsic);
    const Stmt one = IfThenElse::make(line < lines, Evaluate::make(pf));
    const Stmt loop = For::make(j, 0, per, ForType::Serial, DeviceAPI::None, one);
    ++done;
    return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, Block::make(loop, op->body));
  }
};

}  // namespace

Stmt AmxPrefetchNext::visit(const For* op) {
  Stmt body = mutate(op->body);
  if (op->for_type == ForType::Serial && !is_k_loop(op, weights_)) {
    AddToKLoop add(op, weights_);
    Stmt with = add.mutate(body);
    if (add.done) {
      prefetching_loops += add.done;
      body = with;
    }
  }
  if (body.same_as(op->body)) return op;
  return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
}

}  // namespace npukit::ops
