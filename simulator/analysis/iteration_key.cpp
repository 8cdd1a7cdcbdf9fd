#include "simulator/analysis/iteration_key.h"

#include <map>
#include <set>

namespace npukit::sim {

using namespace Halide;
using namespace Halide::Internal;

namespace {

// The names an Expr reads that it does not bind itself (a Let inside it binds its name).
void free_vars(const Expr& e, std::set<std::string>& out) {
  struct Vars : IRVisitor {
    std::set<std::string>* out;
    std::multiset<std::string> bound;
    using IRVisitor::visit;
    void visit(const Variable* v) override {
      if (!bound.count(v->name)) out->insert(v->name);
    }
    void visit(const Let* op) override {
      op->value.accept(this);
      auto it = bound.insert(op->name);
      op->body.accept(this);
      bound.erase(it);
    }
  } vars;
  vars.out = &out;
  if (e.defined()) e.accept(&vars);
}

// What decides the path through a body: its loop bounds, conditions, allocation sizes and
// store predicates, with the lets and inner loops it binds.
struct Control : IRVisitor {
  std::vector<Expr> exprs;
  std::vector<std::pair<std::string, Expr>> lets;  // in binding order
  std::map<std::string, int> bindings;
  std::set<std::string> loops;
  using IRVisitor::visit;
  void visit(const For* op) override {
    loops.insert(op->name);
    exprs.push_back(op->min);
    exprs.push_back(op->extent);
    IRVisitor::visit(op);
  }
  void visit(const IfThenElse* op) override {
    exprs.push_back(op->condition);
    IRVisitor::visit(op);
  }
  void visit(const Allocate* op) override {
    for (const Expr& e : op->extents) exprs.push_back(e);
    IRVisitor::visit(op);
  }
  void visit(const Store* op) override {
    if (!is_const_one(op->predicate)) exprs.push_back(op->predicate);  // a tail's active lanes
    IRVisitor::visit(op);
  }
  void visit(const LetStmt* op) override {
    lets.emplace_back(op->name, op->value);
    ++bindings[op->name];
    IRVisitor::visit(op);
  }
};

// The key's parts: the largest sub-expressions of the control that read the loop
// variable and can be evaluated once per iteration, i.e. read no inner loop's variable.
// An extent `max_2 - min_2 + 1` is one part (equal for every full block) rather than its
// moving ends; a bound that also reads an inner variable contributes its pieces.
class KeyParts : public IRGraphVisitor {
 public:
  KeyParts(const For* loop, const Control& c) : loop_(loop->name), c_(c) {
    for (const auto& [name, value] : c.lets) {
      std::set<std::string> names;
      free_vars(value, names);
      Flags& f = lets_[name];
      f.moves = f.moves || moves(names);
      f.inner = f.inner || c.bindings.at(name) > 1 || inner(names);
      values_[name].push_back(value);
    }
  }

  std::vector<Expr> parts;

  using IRGraphVisitor::include;
  void include(const Expr& e) override {
    if (let_depth_ == 0 && !seen_.insert(e.get()).second) return;  // (a node inside a let may mean more)
    std::set<std::string> names;
    free_vars(e, names);
    if (!moves(names)) return;
    if (!inner(names)) {
      parts.push_back(e);
      return;
    }
    if (const auto* v = e.as<Variable>()) {
      for (const Expr& value : values_.at(v->name)) include(value);
      return;
    }
    if (const auto* l = e.as<Let>()) {
      // Its name stands for its value: never a part, always looked through.
      std::set<std::string> value_names;
      free_vars(l->value, value_names);
      const Flags saved = lets_[l->name];
      const std::vector<Expr> saved_values = values_[l->name];
      lets_[l->name] = Flags{moves(value_names), true};
      values_[l->name] = {l->value};
      ++let_depth_;
      include(l->value);
      include(l->body);
      --let_depth_;
      lets_[l->name] = saved;
      values_[l->name] = saved_values;
      return;
    }
    IRGraphVisitor::include(e);
  }

  // Lets the parts read, in binding order (each bound once: an inner one is never read).
  std::vector<std::pair<std::string, Expr>> lets_read() const {
    std::set<std::string> read;
    for (const Expr& e : parts) free_vars(e, read);
    for (auto it = c_.lets.rbegin(); it != c_.lets.rend(); ++it)
      if (read.count(it->first)) free_vars(it->second, read);
    std::vector<std::pair<std::string, Expr>> out;
    for (const auto& l : c_.lets)
      if (read.count(l.first)) out.push_back(l);
    return out;
  }

 private:
  struct Flags {
    bool moves = false;  // reads the loop variable, directly or through lets
    bool inner = false;  // reads an inner loop's variable, or is bound more than once
  };
  const std::string loop_;
  const Control& c_;
  std::map<std::string, Flags> lets_;
  std::map<std::string, std::vector<Expr>> values_;
  std::set<const IRNode*> seen_;
  int let_depth_ = 0;

  bool moves(const std::set<std::string>& names) const {
    for (const std::string& n : names) {
      auto it = lets_.find(n);
      if (n == loop_ || (it != lets_.end() && it->second.moves)) return true;
    }
    return false;
  }
  bool inner(const std::set<std::string>& names) const {
    for (const std::string& n : names) {
      auto it = lets_.find(n);
      if (c_.loops.count(n) || (it != lets_.end() && it->second.inner)) return true;
    }
    return false;
  }
};

}  // namespace

IterationKey::IterationKey(const For* loop) {
  Control c;
  loop->body.accept(&c);
  KeyParts k(loop, c);
  for (const Expr& e : c.exprs) k.include(e);
  var_ = frame_.slot(loop->name);
  for (const auto& [name, value] : k.lets_read()) {
    IntProgram p(value, frame_);  // (compiled before its own slot exists: a let never reads itself)
    lets_.emplace_back(frame_.slot(name), std::move(p));
  }
  for (const Expr& e : k.parts) values_.emplace_back(e, frame_);
  bound_here_.assign(frame_.values.size(), 0);
  bound_here_[var_] = 1;
  for (const auto& l : lets_) bound_here_[l.first] = 1;
}

void IterationKey::enter(const Bindings& env) {
  for (const auto& [name, slot] : frame_.slots) {
    if (bound_here_[slot]) continue;
    auto it = env.find(name);
    frame_.set(slot, it == env.end() ? std::nullopt : std::optional<int64_t>(it->second));
  }
}

void IterationKey::at(int64_t i, std::vector<std::optional<int64_t>>& key) {
  frame_.set(var_, i);
  for (const auto& [slot, program] : lets_) frame_.set(slot, program.run(frame_));
  key.clear();
  for (const IntProgram& p : values_) key.push_back(p.run(frame_));
}

}  // namespace npukit::sim
