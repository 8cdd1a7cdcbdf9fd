#include "simulator/analysis/iteration_key.h"

#include <algorithm>
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
  std::map<std::string, std::vector<const For*>> loop_nodes;
  using IRVisitor::visit;
  void visit(const For* op) override {
    loops.insert(op->name);
    loop_nodes[op->name].push_back(op);
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

// The DRAM addresses the walk records a transfer at, each as the walk evaluates it: the
// address of the copy's first element (its copy loops at their min, lets inlined) and the
// steps of its two innermost copy loops (contiguity and stride). A load from DRAM inside a
// staged Func's produce copies in; a loop nest that stores into an output and holds no
// produce copies out (NestWalker::walk_for decides the same way).
class Addresses : public IRVisitor {
 public:
  struct Address {
    Expr base;
    std::vector<Expr> steps;
  };
  Addresses(const std::set<std::string>& allocated, const std::set<std::string>& outputs)
      : allocated_(allocated), outputs_(outputs) {}
  std::vector<Address> found;

 private:
  using IRVisitor::visit;
  const std::set<std::string>& allocated_;
  const std::set<std::string>& outputs_;
  struct Bound {
    std::string name;
    Expr value;
    size_t depth;  // loops_.size() where it is bound
  };
  std::vector<Bound> lets_;          // enclosing lets inside the body, outermost first
  std::vector<const For*> loops_;    // enclosing loops inside the body, outermost first
  std::vector<size_t> producers_;    // loops_.size() at each enclosing produce

  void visit(const For* op) override {
    loops_.push_back(op);
    IRVisitor::visit(op);
    loops_.pop_back();
  }
  void visit(const LetStmt* op) override {
    op->value.accept(this);
    lets_.push_back({op->name, op->value, loops_.size()});
    op->body.accept(this);
    lets_.pop_back();
  }
  void visit(const ProducerConsumer* op) override {
    if (op->is_producer) producers_.push_back(loops_.size());
    IRVisitor::visit(op);
    if (op->is_producer) producers_.pop_back();
  }
  void visit(const Store* op) override {
    if (outputs_.count(op->name)) {
      // The copy-out nest: from the outermost enclosing loop that holds no produce or
      // consume and stores no other output.
      size_t first = loops_.size();
      while (first > 0 && copies_out(loops_[first - 1], op->name)) --first;
      if (!producers_.empty()) first = std::max(first, producers_.back());
      add(op->index, first);
    } else if (!producers_.empty()) {
      struct Loads : IRVisitor {
        std::vector<const Load*> found;
        using IRVisitor::visit;
        void visit(const Load* l) override {
          found.push_back(l);
          IRVisitor::visit(l);
        }
      } loads;
      op->value.accept(&loads);
      for (const Load* l : loads.found)
        if (!allocated_.count(l->name)) add(l->index, producers_.back());
    }
    IRVisitor::visit(op);
  }

  bool copies_out(const For* loop, const std::string& output) const {
    struct Finder : IRVisitor {
      const std::set<std::string>* outputs;
      const std::string* output;
      bool other = false;
      using IRVisitor::visit;
      void visit(const ProducerConsumer* p) override {
        other = true;  // (the walker's copy-out nest holds neither produce nor consume)
        IRVisitor::visit(p);
      }
      void visit(const Store* st) override {
        other = other || (st->name != *output && outputs->count(st->name));
        IRVisitor::visit(st);
      }
    } f;
    f.outputs = &outputs_;
    f.output = &output;
    loop->body.accept(&f);
    return !f.other;
  }

  // `index` with the copy loops loops_[first...] at their min, or one of them (`step`)
  // one past it, under the lets bound inside those loops that it reads (kept as lets:
  // inlined, a lowered index can grow exponentially).
  Expr at_min(const Expr& index, size_t first, const For* step) const {
    std::map<std::string, Expr> at;
    for (size_t i = first; i < loops_.size(); ++i) {
      const Expr min = substitute(at, loops_[i]->min);  // an inner min may read an outer copy loop
      at[loops_[i]->name] = loops_[i] == step ? min + 1 : min;
    }
    Expr e = substitute(at, index);
    std::set<std::string> reads;
    free_vars(e, reads);
    for (auto it = lets_.rbegin(); it != lets_.rend() && it->depth > first; ++it) {
      if (!reads.count(it->name)) continue;  // (a data let would make the whole address unknown)
      const Expr value = substitute(at, it->value);
      free_vars(value, reads);
      e = Let::make(it->name, value, e);
    }
    return e;
  }

  void add(Expr index, size_t first) {
    if (const auto* r = index.as<Ramp>()) index = r->base;
    Address a;
    a.base = at_min(index, first, nullptr);
    for (size_t i = loops_.size(); i > first && i + 2 > loops_.size(); --i)
      a.steps.push_back(at_min(index, first, loops_[i - 1]) - a.base);
    found.push_back(a);
  }
};

// The key's parts: the largest sub-expressions of the control that read the loop
// variable and can be evaluated once per iteration, i.e. read no inner loop's variable.
// An extent `max_2 - min_2 + 1` is one part (equal for every full block) rather than its
// moving ends. A piece that also reads the variable of one inner loop whose bounds are
// known per iteration (a chunk's K blocks) belongs to that loop's sequence: its values
// over the inner loop's iterations are part of the key, so chunks whose blocks come out
// the same merge although they start at different blocks. Anything else contributes its
// pieces.
class KeyParts : public IRGraphVisitor {
 public:
  // A key value: an expression's value, or (an address) the largest power of two dividing it.
  struct Value {
    Expr e;
    bool alignment = false;
  };
  struct Sequence {
    const For* loop;
    std::vector<Value> values;
  };

  KeyParts(const For* loop, const Control& c) : loop_(loop->name), c_(c) {
    // Inner loops whose bounds read no inner loop's variable: with every inner loop opaque
    // first, then the sequences' own variables seen through.
    classify_lets();
    for (const auto& [name, nodes] : c.loop_nodes) {
      if (nodes.size() != 1) continue;  // sibling loops of one name: which one is ambiguous
      std::set<std::string> names;
      free_vars(nodes[0]->min, names);
      free_vars(nodes[0]->extent, names);
      if (!opaque(names)) sequence_of_[name] = nodes[0];
    }
    classify_lets();
  }

  std::vector<Value> parts;
  std::map<std::string, Sequence> sequences;

  // A transfer's DRAM address: only its alignment matters when it is one piece.
  void include_address(const Expr& e) {
    address_ = true;
    include(e);
    address_ = false;
  }

  using IRGraphVisitor::include;
  void include(const Expr& e) override {
    const bool address = address_;
    address_ = false;  // the pieces of an address are values
    if (let_depth_ == 0 && !seen_.insert({e.get(), address}).second) return;  // (a node inside a let may mean more)
    std::set<std::string> names;
    free_vars(e, names);
    if (!moves(names)) return;
    if (!opaque(names)) {
      const std::set<std::string> seq = sequences_read(names);
      if (seq.empty()) {
        parts.push_back({e, address});
        return;
      }
      if (seq.size() == 1) {
        const std::string& l = *seq.begin();
        sequences.try_emplace(l, Sequence{sequence_of_.at(l), {}}).first->second.values.push_back({e, address});
        return;
      }
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
      lets_[l->name] = Flags{moves(value_names), true, {}};
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

  // Lets the parts and sequences read, in binding order (each bound once: an opaque one is
  // never read), split by the sequence whose variable they read ("" for none).
  std::map<std::string, std::vector<std::pair<std::string, Expr>>> lets_read() const {
    std::set<std::string> read;
    for (const Value& v : parts) free_vars(v.e, read);
    for (const auto& [l, seq] : sequences)
      for (const Value& v : seq.values) free_vars(v.e, read);
    for (auto it = c_.lets.rbegin(); it != c_.lets.rend(); ++it)
      if (read.count(it->first)) free_vars(it->second, read);
    std::map<std::string, std::vector<std::pair<std::string, Expr>>> out;
    for (const auto& l : c_.lets) {
      if (!read.count(l.first)) continue;
      const std::set<std::string>& seq = lets_.at(l.first).sequences;
      out[seq.empty() ? "" : *seq.begin()].push_back(l);
    }
    return out;
  }

 private:
  struct Flags {
    bool moves = false;   // reads the loop variable, directly or through lets
    bool opaque = false;  // reads an inner loop's variable (not a sequence's), or is bound more than once
    std::set<std::string> sequences;  // the sequence loops whose variables it reads
  };
  const std::string loop_;
  const Control& c_;
  std::map<std::string, Flags> lets_;
  std::map<std::string, std::vector<Expr>> values_;
  std::map<std::string, const For*> sequence_of_;
  std::set<std::pair<const IRNode*, bool>> seen_;
  int let_depth_ = 0;
  bool address_ = false;

  void classify_lets() {
    lets_.clear();
    values_.clear();
    for (const auto& [name, value] : c_.lets) {
      std::set<std::string> names;
      free_vars(value, names);
      Flags& f = lets_[name];
      f.moves = f.moves || moves(names);
      f.opaque = f.opaque || c_.bindings.at(name) > 1 || opaque(names);
      const std::set<std::string> seq = sequences_read(names);
      f.sequences.insert(seq.begin(), seq.end());
      values_[name].push_back(value);
    }
  }
  bool moves(const std::set<std::string>& names) const {
    for (const std::string& n : names) {
      auto it = lets_.find(n);
      if (n == loop_ || (it != lets_.end() && it->second.moves)) return true;
    }
    return false;
  }
  bool opaque(const std::set<std::string>& names) const {
    for (const std::string& n : names) {
      auto it = lets_.find(n);
      if ((c_.loops.count(n) && !sequence_of_.count(n)) || (it != lets_.end() && it->second.opaque)) return true;
    }
    return false;
  }
  std::set<std::string> sequences_read(const std::set<std::string>& names) const {
    std::set<std::string> out;
    for (const std::string& n : names) {
      if (sequence_of_.count(n)) out.insert(n);
      auto it = lets_.find(n);
      if (it != lets_.end()) out.insert(it->second.sequences.begin(), it->second.sequences.end());
    }
    return out;
  }
};

}  // namespace

IterationKey::IterationKey(const For* loop, const std::set<std::string>& allocated,
                           const std::set<std::string>& outputs) {
  Control c;
  loop->body.accept(&c);
  KeyParts k(loop, c);
  for (const Expr& e : c.exprs) k.include(e);
  Addresses addresses(allocated, outputs);
  loop->body.accept(&addresses);
  for (const Addresses::Address& a : addresses.found) {
    k.include_address(a.base);
    for (const Expr& step : a.steps) k.include(step);
  }
  auto lets = k.lets_read();
  auto compile_lets = [&](const std::string& which, std::vector<std::pair<int, IntProgram>>& out) {
    for (const auto& [name, value] : lets[which]) {
      IntProgram p(value, frame_);  // (compiled before its own slot exists: a let never reads itself)
      out.emplace_back(frame_.slot(name), std::move(p));
    }
  };
  // (A vector copy's main and tail paths often give the same pieces: each is computed once.
  // A piece that is unknown whatever the iteration, a gather's vector index, is left out.)
  auto distinct = [&](const std::vector<KeyParts::Value>& values) {
    std::vector<Piece> out;
    for (const KeyParts::Value& v : values) {
      if (IntProgram(v.e, frame_).always_unknown()) continue;
      bool seen = false;
      for (const Piece& k : out) seen = seen || (k.alignment == v.alignment && equal(k.e, v.e));
      if (!seen) out.push_back({v.e, v.alignment});
    }
    return out;
  };
  var_ = frame_.slot(loop->name);
  compile_lets("", lets_);
  std::vector<std::pair<Sequence, std::vector<Piece>>> sequences;
  for (const auto& [name, seq] : k.sequences) {
    Sequence s{frame_.slot(name), IntProgram(seq.loop->min, frame_), IntProgram(seq.loop->extent, frame_), {}, {}};
    compile_lets(name, s.lets);
    sequences.emplace_back(std::move(s), distinct(seq.values));
  }
  split_into_parts(distinct(k.parts), std::move(sequences));
  bound_here_.assign(frame_.values.size(), 0);
  bound_here_[var_] = 1;
  for (const auto& l : lets_) bound_here_[l.first] = 1;
  for (const Part& p : parts_) {
    for (const Sequence& s : p.sequences) {
      bound_here_[s.var] = 1;
      for (const auto& l : s.lets) bound_here_[l.first] = 1;
    }
  }
}

namespace {

// A value as signed terms, through adds, subtracts, multiplications by a name or a
// constant, casts and lets (a term keeps the lets it reads): exact in wrapping arithmetic,
// as IntProgram computes. Empty for a vector value or one of more than kMostTerms terms.
struct Term {
  Expr e;
  bool negative;
};

class TermSplitter {
 public:
  static constexpr size_t kMostTerms = 64;
  std::vector<Term> split(const Expr& e) {
    terms_.clear();
    too_many_ = false;
    if (e.type().is_vector() || !e.type().is_int_or_uint()) return {};
    expand(e, false, {});
    if (too_many_) return {};
    return terms_;
  }

 private:
  struct Bound {
    std::string name;
    Expr value;
  };
  std::vector<Bound> scope_;  // the expression's lets around the current node, outermost first
  std::vector<Term> terms_;
  bool too_many_ = false;

  static Expr int64(const Expr& e) { return e.type() == Int(64) ? e : Cast::make(Int(64), e); }
  bool bound(const std::string& name) const {
    for (const Bound& b : scope_)
      if (b.name == name) return true;
    return false;
  }
  bool factor(const Expr& e) const {
    if (e.as<IntImm>() || e.as<UIntImm>()) return true;
    const auto* v = e.as<Variable>();
    return v && !bound(v->name);
  }
  void expand(const Expr& e, bool negative, std::vector<Expr> factors) {
    if (too_many_) return;
    if (const auto* a = e.as<Add>()) {
      expand(a->a, negative, factors);
      expand(a->b, negative, factors);
    } else if (const auto* d = e.as<Sub>()) {
      expand(d->a, negative, factors);
      expand(d->b, !negative, factors);
    } else if (const auto* m = e.as<Mul>(); m && (factor(m->a) || factor(m->b))) {
      const bool b_factor = factor(m->b);
      factors.push_back(b_factor ? m->b : m->a);
      expand(b_factor ? m->a : m->b, negative, factors);
    } else if (const auto* c = e.as<Cast>(); c && c->value.type().is_int_or_uint() && c->type.is_int_or_uint()) {
      expand(c->value, negative, factors);  // (IntProgram reads a cast as its value)
    } else if (const auto* l = e.as<Let>()) {
      scope_.push_back({l->name, l->value});
      expand(l->body, negative, factors);
      scope_.pop_back();
    } else if (const auto* v = e.as<Variable>(); v && bound(v->name)) {
      size_t i = scope_.size();
      while (scope_[i - 1].name != v->name) --i;
      std::vector<Bound> inner(scope_.begin() + static_cast<std::ptrdiff_t>(i) - 1, scope_.end());
      scope_.resize(i - 1);  // its value is read where it is bound
      expand(inner.front().value, negative, factors);
      scope_.insert(scope_.end(), inner.begin(), inner.end());
    } else {
      Expr t = int64(e);
      for (const Expr& f : factors) t = Mul::make(t, int64(f));
      std::set<std::string> reads;
      free_vars(t, reads);
      for (auto it = scope_.rbegin(); it != scope_.rend(); ++it) {
        if (!reads.count(it->name)) continue;
        free_vars(it->value, reads);
        t = Let::make(it->name, it->value, t);
      }
      terms_.push_back({t, negative});
      too_many_ = terms_.size() > kMostTerms;
    }
  }
};

Expr sum_of(const std::vector<Term>& terms) {
  Expr s;
  for (const Term& t : terms) {
    if (!s.defined()) {
      s = t.negative ? Sub::make(make_zero(Int(64)), t.e) : t.e;
    } else {
      s = t.negative ? Sub::make(s, t.e) : Add::make(s, t.e);
    }
  }
  return s;
}

}  // namespace

void IterationKey::split_into_parts(std::vector<Piece> values, std::vector<std::pair<Sequence, std::vector<Piece>>> sequences) {
  const size_t slots = frame_.values.size();
  std::vector<int> let_at(slots, -1), sequence_at(slots, -1), sequence_let_at(slots, -1);  // by slot: what binds it
  for (size_t l = 0; l < lets_.size(); ++l) let_at[lets_[l].first] = static_cast<int>(l);
  for (size_t q = 0; q < sequences.size(); ++q) {
    const Sequence& s = sequences[q].first;
    sequence_at[s.var] = static_cast<int>(q);
    for (size_t l = 0; l < s.lets.size(); ++l) {
      sequence_at[s.lets[l].first] = static_cast<int>(q);
      sequence_let_at[s.lets[l].first] = static_cast<int>(l);
    }
  }
  // The components: lets that read the loop variable, and the lets they read.
  std::vector<char> component(lets_.size(), 0);
  for (size_t l = 0; l < lets_.size(); ++l)
    for (int r : lets_[l].second.reads()) component[l] = component[l] || r == var_;
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t l = 0; l < lets_.size(); ++l) {
      if (!component[l]) continue;
      for (int r : lets_[l].second.reads()) {
        if (let_at[r] < 0 || component[let_at[r]]) continue;
        component[let_at[r]] = 1;
        changed = true;
      }
    }
  }
  for (size_t l = 0; l < lets_.size(); ++l)
    if (component[l]) components_.push_back(l);

  // What an expression reads, through the lets: every slot it loads is followed (a name
  // bound inside an expression too, which can only add components).
  struct Reads {
    std::set<int> components;
    std::set<size_t> lets, sequence_lets;  // lets_ and the own sequence's lets it needs
    bool direct = false, own = false, other_sequence = false;
    bool moves() const { return direct || own || !components.empty(); }
  };
  auto trace = [&](std::vector<int> work, int own_sequence, Reads& r) {
    while (!work.empty()) {
      const int slot = work.back();
      work.pop_back();
      if (slot == var_) {
        r.direct = true;
      } else if (sequence_at[slot] >= 0) {
        if (sequence_at[slot] != own_sequence) {
          r.other_sequence = true;
          continue;
        }
        r.own = true;
        const int l = sequence_let_at[slot];
        if (l >= 0 && r.sequence_lets.insert(l).second)
          for (int next : sequences[own_sequence].first.lets[l].second.reads()) work.push_back(next);
      } else if (const int l = let_at[slot]; l >= 0) {
        if (component[l]) {
          r.components.insert(slot);
        } else if (r.lets.insert(l).second) {
          for (int next : lets_[l].second.reads()) work.push_back(next);
        }
      }
    }
  };
  auto reads_of = [&](const Expr& e, int own_sequence) {
    std::set<std::string> names;
    free_vars(e, names);
    std::vector<int> work;
    for (const std::string& n : names) work.push_back(frame_.slot(n));
    for (std::vector<int>* v : {&let_at, &sequence_at, &sequence_let_at}) v->resize(frame_.values.size(), -1);  // (new names: bound outside)
    Reads r;
    trace(work, own_sequence, r);
    return r;
  };

  // With `tangled` (a sequence reads another's variable) nothing is split: one part,
  // evaluated at every iteration in the original order.
  bool tangled = false;
  std::vector<Reads> bounds(sequences.size());  // of each sequence's min and extent
  for (size_t q = 0; q < sequences.size(); ++q) {
    const Sequence& s = sequences[q].first;
    std::vector<int> work = s.min.reads();
    for (int r : s.extent.reads()) work.push_back(r);
    trace(work, static_cast<int>(q), bounds[q]);
    tangled = tangled || bounds[q].other_sequence;
  }
  // Each value's sums: its terms grouped by what they read (the whole value when it does
  // not split).
  struct Group {
    Reads reads;
    std::vector<Term> terms;
  };
  TermSplitter splitter;
  auto groups_of = [&](const Piece& v, int own_sequence) {
    std::vector<Group> groups;
    for (const Term& t : splitter.split(v.e)) {
      const Reads r = reads_of(t.e, own_sequence);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
        return g.reads.direct == r.direct && g.reads.own == r.own && g.reads.components == r.components;
      });
      if (it == groups.end()) it = groups.insert(groups.end(), Group{r, {}});
      it->reads.lets.insert(r.lets.begin(), r.lets.end());
      it->reads.sequence_lets.insert(r.sequence_lets.begin(), r.sequence_lets.end());
      it->reads.other_sequence = it->reads.other_sequence || r.other_sequence;
      it->terms.push_back(t);
    }
    if (groups.size() < 2) groups = {Group{reads_of(v.e, own_sequence), {Term{v.e, false}}}};
    for (const Group& g : groups) tangled = tangled || g.reads.other_sequence;
    return groups;
  };
  std::vector<std::vector<Group>> plain_groups;
  std::vector<std::vector<std::vector<Group>>> sequence_groups(sequences.size());
  for (const Piece& v : values) plain_groups.push_back(groups_of(v, -1));
  for (size_t q = 0; q < sequences.size(); ++q)
    for (const Piece& v : sequences[q].second) sequence_groups[q].push_back(groups_of(v, static_cast<int>(q)));

  if (tangled) {
    Part p;
    p.direct = true;
    for (size_t l = 0; l < lets_.size(); ++l)
      if (!component[l]) p.lets.push_back(l);
    for (size_t v = 0; v < values.size(); ++v) {
      p.values.emplace_back(values[v].e, frame_);
      outputs_.push_back({{Sum{0, static_cast<int>(v)}}, values[v].alignment});
    }
    for (size_t q = 0; q < sequences.size(); ++q) {
      auto& [s, pieces] = sequences[q];
      SequenceOutput o;
      o.copies.emplace_back(0, static_cast<int>(q));
      for (size_t v = 0; v < pieces.size(); ++v) {
        s.values.emplace_back(pieces[v].e, frame_);
        o.values.push_back({{{0, static_cast<int>(v)}}, {}, pieces[v].alignment});
      }
      p.sequences.push_back(std::move(s));
      sequence_outputs_.push_back(std::move(o));
    }
    parts_.push_back(std::move(p));
    group_outputs();
    return;
  }

  // Parts by what they read; equal sums of one part are computed once.
  std::map<std::pair<bool, std::set<int>>, size_t> part_of;
  std::vector<std::set<size_t>> part_lets;
  std::vector<std::vector<Expr>> part_sums;
  auto part = [&](const Reads& r) -> int {
    auto [it, fresh] = part_of.try_emplace({r.direct, r.direct ? std::set<int>{} : r.components}, parts_.size());
    if (fresh) {
      parts_.emplace_back();
      parts_.back().direct = r.direct;
      if (!r.direct) parts_.back().components.assign(r.components.begin(), r.components.end());
      part_lets.emplace_back();
      part_sums.emplace_back();
    }
    part_lets[it->second].insert(r.lets.begin(), r.lets.end());
    return static_cast<int>(it->second);
  };
  auto index_in = [](std::vector<Expr>& sums, const Expr& e) {
    for (size_t k = 0; k < sums.size(); ++k)
      if (equal(sums[k], e)) return static_cast<int>(k);
    sums.push_back(e);
    return static_cast<int>(sums.size() - 1);
  };
  auto plain_sum = [&](const Group& g) {
    const int p = part(g.reads);
    const size_t before = part_sums[p].size();
    const int k = index_in(part_sums[p], sum_of(g.terms));
    if (part_sums[p].size() > before) parts_[p].values.emplace_back(part_sums[p].back(), frame_);
    return Sum{p, k};
  };
  for (size_t v = 0; v < values.size(); ++v) {
    Output o{{}, values[v].alignment};
    for (const Group& g : plain_groups[v]) o.sums.push_back(plain_sum(g));
    outputs_.push_back(std::move(o));
  }
  // A sequence's sums that read different components are sequences of their own (with the
  // same bounds): the ones that read none are computed once per entry.
  for (size_t q = 0; q < sequences.size(); ++q) {
    const Sequence& s = sequences[q].first;
    struct Copy {
      Reads reads;
      std::vector<Expr> sums;
    };
    std::vector<Copy> copies;
    auto copy_for = [&](Reads r) {
      r.direct = r.direct || bounds[q].direct;
      r.components.insert(bounds[q].components.begin(), bounds[q].components.end());
      r.lets.insert(bounds[q].lets.begin(), bounds[q].lets.end());
      auto it = std::find_if(copies.begin(), copies.end(), [&](const Copy& c) {
        return c.reads.direct == r.direct && (r.direct || c.reads.components == r.components);
      });
      if (it == copies.end()) it = copies.insert(copies.end(), Copy{r, {}});
      it->reads.lets.insert(r.lets.begin(), r.lets.end());
      it->reads.sequence_lets.insert(r.sequence_lets.begin(), r.sequence_lets.end());
      return static_cast<int>(it - copies.begin());
    };
    SequenceOutput o;
    for (size_t v = 0; v < sequences[q].second.size(); ++v) {
      SequenceOutput::Value out{{}, {}, sequences[q].second[v].alignment};
      for (const Group& g : sequence_groups[q][v]) {
        if (!g.reads.own) {
          out.plain.push_back(plain_sum(g));
          continue;
        }
        const int c = copy_for(g.reads);
        out.in_copy.emplace_back(c, index_in(copies[c].sums, sum_of(g.terms)));
      }
      o.values.push_back(std::move(out));
    }
    if (copies.empty()) copy_for(Reads{});  // every sum left the loop: its bounds still count
    for (const Copy& c : copies) {
      Sequence seq{s.var, s.min, s.extent, {}, {}};
      for (size_t l : c.reads.sequence_lets) seq.lets.push_back(s.lets[l]);
      for (const Expr& e : c.sums) seq.values.emplace_back(e, frame_);
      const int p = part(c.reads);
      o.copies.emplace_back(p, static_cast<int>(parts_[p].sequences.size()));
      parts_[p].sequences.push_back(std::move(seq));
    }
    sequence_outputs_.push_back(std::move(o));
  }
  for (size_t p = 0; p < parts_.size(); ++p) parts_[p].lets.assign(part_lets[p].begin(), part_lets[p].end());
  group_outputs();
}

size_t IterationKey::Hash::operator()(const std::vector<int64_t>& k) const {
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  return static_cast<size_t>(h);
}

void IterationKey::enter(const SlotFrame& env) {
  if (&env != entered_from_ || env.values.size() != entered_slots_) {  // (a frame only grows)
    from_.clear();
    for (const auto& [name, slot] : frame_.slots) {
      if (bound_here_[slot]) continue;
      auto it = env.slots.find(name);
      from_.emplace_back(slot, it == env.slots.end() ? -1 : it->second);
    }
    entered_from_ = &env;
    entered_slots_ = env.values.size();
  }
  for (const auto& [mine, theirs] : from_) {
    const bool known = theirs >= 0 && env.known[theirs];
    frame_.set(mine, known ? std::optional<int64_t>(env.values[theirs]) : std::nullopt);
  }
  for (Part& p : parts_) p.memo.clear();
  for (Group& g : groups_) g.memo.clear();
}

void IterationKey::evaluate(const Part& p, Result& out) {
  out.v.clear();
  out.sequence_at.clear();
  out.reusable = true;
  for (size_t l : p.lets) frame_.set(lets_[l].first, lets_[l].second.run(frame_));
  for (const IntProgram& v : p.values) out.v.push_back(v.run(frame_));
  for (const Sequence& s : p.sequences) {
    out.sequence_at.push_back(out.v.size());
    const auto min = s.min.run(frame_), extent = s.extent.run(frame_);
    out.v.push_back(min);
    out.v.push_back(extent);
    if (!min || !extent || *extent > kLongestSequence) {
      out.reusable = false;  // too long to compare: this iteration merges with none
      continue;
    }
    for (int64_t j = *min; j < *min + *extent; ++j) {
      frame_.set(s.var, j);
      for (const auto& [slot, program] : s.lets) frame_.set(slot, program.run(frame_));
      for (const IntProgram& v : s.values) out.v.push_back(v.run(frame_));
    }
  }
}

// Memo lookups judged over many iterations (and entries): components that differ at nearly
// every iteration (a token index) cost more to look up than they save, but the innermost
// component of a fused loop differs at each of its first iterations.
template <class Memo>
static bool worth_memo(const Memo& m) {
  return !(m.lookups >= 1024 && m.misses * 4 > m.lookups * 3);
}

const IterationKey::Result& IterationKey::fetch(int n) {
  Part& p = parts_[n];
  if (p.fetched == generation_) return *p.result;
  p.fetched = generation_;
  p.result = &p.scratch;
  if (p.direct || !p.memo_on) {
    evaluate(p, p.scratch);
    return p.scratch;
  }
  components_now_.clear();
  for (int slot : p.components) {
    components_now_.push_back(frame_.values[slot]);
    components_now_.push_back(frame_.known[slot]);
  }
  ++p.lookups;
  if (auto it = p.memo.find(components_now_); it != p.memo.end()) return *(p.result = &it->second);
  ++p.misses;
  evaluate(p, p.scratch);
  if (!worth_memo(p)) {
    p.memo_on = false;
    p.memo.clear();
  } else if (p.scratch.reusable) {
    p.result = &p.memo.emplace(components_now_, p.scratch).first->second;
  }
  return *p.result;
}

// The sums added up, in wrapping arithmetic (unknown if one is).
std::optional<int64_t> IterationKey::combine(const std::vector<Sum>& sums) {
  uint64_t total = 0;
  for (const Sum& s : sums) {
    const std::optional<int64_t>& v = fetch(s.part).v[s.index];
    if (!v) return std::nullopt;
    total += static_cast<uint64_t>(*v);
  }
  return static_cast<int64_t>(total);
}

bool IterationKey::compute(const Group& g, int64_t i, std::vector<std::optional<int64_t>>& key) {
  auto value = [](std::optional<int64_t> v, bool alignment) {
    return v && alignment ? std::optional<int64_t>(pow2_dividing(*v)) : v;
  };
  for (int n : g.outputs) key.push_back(value(combine(outputs_[n].sums), outputs_[n].alignment));
  bool reusable = true;
  for (int n : g.sequence_outputs) {
    const SequenceOutput& o = sequence_outputs_[n];
    const auto [p0, s0] = o.copies.front();
    const Result& r0 = fetch(p0);
    const std::optional<int64_t> min = r0.v[r0.sequence_at[s0]], extent = r0.v[r0.sequence_at[s0] + 1];
    key.push_back(min);
    key.push_back(extent);
    if (!min || !extent || *extent > kLongestSequence) {
      key.push_back(i);  // too long to compare: this iteration merges with none
      reusable = false;
      continue;
    }
    for (int64_t j = 0; j < *extent; ++j) {
      for (const SequenceOutput::Value& v : o.values) {
        std::optional<int64_t> total = combine(v.plain);
        for (const auto& [c, k] : v.in_copy) {
          if (!total) break;
          const auto [p, s] = o.copies[c];
          const Result& r = fetch(p);
          const size_t width = parts_[p].sequences[s].values.size();
          const std::optional<int64_t>& x = r.v[r.sequence_at[s] + 2 + j * width + k];
          total = x ? std::optional<int64_t>(static_cast<int64_t>(static_cast<uint64_t>(*total) + static_cast<uint64_t>(*x)))
                    : std::nullopt;
        }
        key.push_back(value(total, v.alignment));
      }
    }
  }
  return reusable;
}

void IterationKey::group_outputs() {
  std::map<std::pair<bool, std::set<int>>, size_t> group_of;
  auto group = [&](const std::set<int>& parts) -> Group& {
    bool direct = false;
    std::set<int> components;
    for (int p : parts) {
      direct = direct || parts_[p].direct;
      components.insert(parts_[p].components.begin(), parts_[p].components.end());
    }
    if (direct) components.clear();
    auto [it, fresh] = group_of.try_emplace({direct, components}, groups_.size());
    if (fresh) {
      groups_.emplace_back();
      groups_.back().direct = direct;
      groups_.back().components.assign(components.begin(), components.end());
    }
    return groups_[it->second];
  };
  for (size_t n = 0; n < outputs_.size(); ++n) {
    std::set<int> parts;
    for (const Sum& s : outputs_[n].sums) parts.insert(s.part);
    group(parts).outputs.push_back(static_cast<int>(n));
  }
  for (size_t n = 0; n < sequence_outputs_.size(); ++n) {
    std::set<int> parts;
    for (const auto& [p, s] : sequence_outputs_[n].copies) parts.insert(p);
    for (const SequenceOutput::Value& v : sequence_outputs_[n].values)
      for (const Sum& s : v.plain) parts.insert(s.part);
    group(parts).sequence_outputs.push_back(static_cast<int>(n));
  }
}

void IterationKey::at(int64_t i, std::vector<std::optional<int64_t>>& key) {
  frame_.set(var_, i);
  for (size_t l : components_) frame_.set(lets_[l].first, lets_[l].second.run(frame_));
  ++generation_;
  key.clear();
  for (Group& g : groups_) {
    if (g.direct || !g.memo_on) {
      compute(g, i, key);
      continue;
    }
    components_now_.clear();
    for (int slot : g.components) {
      components_now_.push_back(frame_.values[slot]);
      components_now_.push_back(frame_.known[slot]);
    }
    ++g.lookups;
    if (auto it = g.memo.find(components_now_); it != g.memo.end()) {
      key.insert(key.end(), it->second.begin(), it->second.end());
      continue;
    }
    ++g.misses;
    std::vector<int64_t> components = components_now_;  // (fetch reuses components_now_)
    values_now_.clear();
    const bool reusable = compute(g, i, values_now_);
    key.insert(key.end(), values_now_.begin(), values_now_.end());
    if (!worth_memo(g)) {
      g.memo_on = false;
      g.memo.clear();
    } else if (reusable) {
      g.memo.emplace(std::move(components), values_now_);
    }
  }
}

}  // namespace npukit::sim
