#include "ops/amx_jam.h"

#include <set>
#include <string>

namespace npukit::ops {
namespace {

using namespace Halide;
using namespace Halide::Internal;

// What a loop body does to memory, and whether it holds an AMX accumulator at all.
class Effects : public IRGraphVisitor {
 public:
  using IRGraphVisitor::visit;
  std::set<std::string> amx, written, read;
  bool other_effects = false;  // a store or call the jam cannot reason about

 private:
  void visit(const Allocate* op) override {
    if (op->memory_type == MemoryType::AMXTile) {
      amx.insert(op->name);
    } else {
      other_effects = true;
    }
    IRGraphVisitor::visit(op);
  }
  void visit(const Store* op) override {
    if (!amx.count(op->name)) other_effects = true;
    IRGraphVisitor::visit(op);
  }
  void visit(const Load* op) override {
    if (!amx.count(op->name)) read.insert(op->name);
    IRGraphVisitor::visit(op);
  }
  void visit(const Call* op) override {
    const Variable* buffer = op->args.size() > 2 ? op->args[2].as<Variable>() : nullptr;
    if (op->name == "tile_store" && buffer) {
      written.insert(buffer->name);
    } else if (op->name == "tile_load" && buffer) {
      read.insert(buffer->name);
    } else if (!op->is_pure() && op->name != "tile_zero" && op->name != "tile_matmul") {
      other_effects = true;
    }
    IRGraphVisitor::visit(op);
  }
};

// Whether the two iterations of `body` may run interleaved: each writes only its own
// accumulators (renamed per copy) and tile_store buffers that no iteration reads.
bool jammable(const Stmt& body) {
  Effects e;
  body.accept(&e);
  if (e.amx.empty() || e.other_effects) return false;
  for (const std::string& w : e.written) {
    if (e.read.count(w)) return false;
  }
  return true;
}

// Every name the statement defines (lets, loops, allocations), so that a copy can rename
// them and two copies can share one scope.
class Defined : public IRGraphVisitor {
 public:
  using IRGraphVisitor::visit;
  std::set<std::string> names;

 private:
  void visit(const LetStmt* op) override { names.insert(op->name), IRGraphVisitor::visit(op); }
  void visit(const Let* op) override { names.insert(op->name), IRGraphVisitor::visit(op); }
  void visit(const For* op) override { names.insert(op->name), IRGraphVisitor::visit(op); }
  void visit(const Allocate* op) override { names.insert(op->name), IRGraphVisitor::visit(op); }
};

class Rename : public IRMutator {
 public:
  Rename(std::set<std::string> names, std::string suffix) : names_(std::move(names)), suffix_(std::move(suffix)) {}
  using IRMutator::visit;

 private:
  std::set<std::string> names_;
  std::string suffix_;
  std::string name(const std::string& n) const { return names_.count(n) ? n + suffix_ : n; }

  Expr visit(const Variable* op) override {
    return names_.count(op->name) ? Variable::make(op->type, name(op->name), op->image, op->param, op->reduction_domain)
                                  : Expr(op);
  }
  Expr visit(const Load* op) override {
    return Load::make(op->type, name(op->name), mutate(op->index), op->image, op->param, mutate(op->predicate),
                      op->alignment);
  }
  Expr visit(const Let* op) override { return Let::make(name(op->name), mutate(op->value), mutate(op->body)); }
  Stmt visit(const LetStmt* op) override { return LetStmt::make(name(op->name), mutate(op->value), mutate(op->body)); }
  Stmt visit(const For* op) override {
    return For::make(name(op->name), mutate(op->min), mutate(op->extent), op->for_type, op->device_api,
                     mutate(op->body));
  }
  Stmt visit(const Store* op) override {
    return Store::make(name(op->name), mutate(op->value), mutate(op->index), op->param, mutate(op->predicate),
                       op->alignment);
  }
  Stmt visit(const Allocate* op) override {
    std::vector<Expr> extents;
    for (const Expr& e : op->extents) extents.push_back(mutate(e));
    return Allocate::make(name(op->name), op->type, op->memory_type, extents, mutate(op->condition),
                          mutate(op->body), op->new_expr, op->free_function);
  }
  Stmt visit(const Free* op) override { return Free::make(name(op->name)); }
  Stmt visit(const ProducerConsumer* op) override {
    return ProducerConsumer::make(name(op->name), op->is_producer, mutate(op->body));
  }
};

// The two copies side by side, matched node by node so that their K loops become one loop.
// Where the shapes part (a loop bound or a condition that differs between the copies), the
// rest of each copy runs one after the other, which jammable() has shown to be the same.
Stmt zip(const Stmt& a, const Stmt& b) {
  if (const auto *fa = a.as<For>(), *fb = b.as<For>(); fa && fb && fa->for_type == ForType::Serial &&
                                                       fb->for_type == ForType::Serial && equal(fa->min, fb->min) &&
                                                       equal(fa->extent, fb->extent)) {
    const Stmt body_b = substitute(fb->name, Variable::make(Int(32), fa->name), fb->body);
    return For::make(fa->name, fa->min, fa->extent, fa->for_type, fa->device_api, zip(fa->body, body_b));
  }
  if (const auto *la = a.as<LetStmt>(), *lb = b.as<LetStmt>(); la && lb) {
    return LetStmt::make(la->name, la->value, LetStmt::make(lb->name, lb->value, zip(la->body, lb->body)));
  }
  if (const auto *xa = a.as<Allocate>(), *xb = b.as<Allocate>(); xa && xb) {
    const Stmt inner = Allocate::make(xb->name, xb->type, xb->memory_type, xb->extents, xb->condition,
                                      zip(xa->body, xb->body), xb->new_expr, xb->free_function);
    return Allocate::make(xa->name, xa->type, xa->memory_type, xa->extents, xa->condition, inner, xa->new_expr,
                          xa->free_function);
  }
  if (const auto *pa = a.as<ProducerConsumer>(), *pb = b.as<ProducerConsumer>();
      pa && pb && pa->is_producer == pb->is_producer) {
    return ProducerConsumer::make(pa->name, pa->is_producer, zip(pa->body, pb->body));
  }
  if (const auto *ba = a.as<Block>(), *bb = b.as<Block>(); ba && bb) {
    return Block::make(zip(ba->first, bb->first), zip(ba->rest, bb->rest));
  }
  if (const auto *ia = a.as<IfThenElse>(), *ib = b.as<IfThenElse>();
      ia && ib && equal(ia->condition, ib->condition) && ia->else_case.defined() == ib->else_case.defined()) {
    return IfThenElse::make(ia->condition, zip(ia->then_case, ib->then_case),
                            ia->else_case.defined() ? zip(ia->else_case, ib->else_case) : Stmt());
  }
  return Block::make(a, b);
}

}  // namespace

Stmt AmxJam::visit(const For* op) {
  Stmt body = mutate(op->body);
  if (op->for_type != ForType::Serial || !is_const(op->extent, 2) || !jammable(body)) {
    if (body.same_as(op->body)) return op;
    return For::make(op->name, op->min, op->extent, op->for_type, op->device_api, body);
  }
  Defined defined;
  body.accept(&defined);
  Stmt copy[2];
  for (int i = 0; i < 2; ++i) {
    const Stmt at_i = substitute(op->name, simplify(op->min + i), body);
    copy[i] = Rename(defined.names, ".jam" + std::to_string(i)).mutate(at_i);
  }
  ++jammed_loops;
  return zip(copy[0], copy[1]);
}

}  // namespace npukit::ops
