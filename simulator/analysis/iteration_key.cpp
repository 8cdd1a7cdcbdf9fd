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
  // (A vector copy's main and tail paths often give the same pieces: each is computed once.)
  auto compile_values = [&](const std::vector<KeyParts::Value>& values, std::vector<Value>& out) {
    std::vector<const KeyParts::Value*> kept;
    for (const KeyParts::Value& v : values) {
      bool seen = false;
      for (const KeyParts::Value* k : kept) seen = seen || (k->alignment == v.alignment && equal(k->e, v.e));
      if (seen) continue;
      kept.push_back(&v);
      out.push_back({IntProgram(v.e, frame_), v.alignment});
    }
  };
  var_ = frame_.slot(loop->name);
  compile_lets("", lets_);
  std::vector<Value> values;
  compile_values(k.parts, values);
  std::vector<Sequence> sequences;
  for (const auto& [name, seq] : k.sequences) {
    Sequence s{frame_.slot(name), IntProgram(seq.loop->min, frame_), IntProgram(seq.loop->extent, frame_), {}, {}};
    compile_lets(name, s.lets);
    compile_values(seq.values, s.values);
    sequences.push_back(std::move(s));
  }
  bound_here_.assign(frame_.values.size(), 0);
  bound_here_[var_] = 1;
  for (const auto& l : lets_) bound_here_[l.first] = 1;
  for (const Sequence& s : sequences) {
    bound_here_[s.var] = 1;
    for (const auto& l : s.lets) bound_here_[l.first] = 1;
  }
  split_into_parts(std::move(values), std::move(sequences));
}

void IterationKey::split_into_parts(std::vector<Value> values, std::vector<Sequence> sequences) {
  const size_t slots = frame_.values.size();
  std::vector<int> let_at(slots, -1), sequence_at(slots, -1);  // by slot: the let or sequence binding it
  for (size_t l = 0; l < lets_.size(); ++l) let_at[lets_[l].first] = static_cast<int>(l);
  for (size_t q = 0; q < sequences.size(); ++q) {
    sequence_at[sequences[q].var] = static_cast<int>(q);
    for (const auto& l : sequences[q].lets) sequence_at[l.first] = static_cast<int>(q);
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

  // What an item reads, through the lets: every slot it loads is followed (a name bound
  // inside an expression too, which can only add components).
  struct Reads {
    std::set<int> components;
    std::set<size_t> lets;
    bool direct = false, other_sequence = false;
  };
  auto trace = [&](std::vector<int> work, int own_sequence, Reads& r) {
    while (!work.empty()) {
      const int slot = work.back();
      work.pop_back();
      if (slot == var_) {
        r.direct = true;
      } else if (sequence_at[slot] >= 0) {
        r.other_sequence = r.other_sequence || sequence_at[slot] != own_sequence;
      } else if (const int l = let_at[slot]; l >= 0) {
        if (component[l]) {
          r.components.insert(slot);
        } else if (r.lets.insert(l).second) {
          for (int next : lets_[l].second.reads()) work.push_back(next);
        }
      }
    }
  };
  std::vector<Reads> value_reads(values.size()), sequence_reads(sequences.size());
  bool tangled = false;  // a sequence reads another's variable: keep the original order
  for (size_t v = 0; v < values.size(); ++v) trace(values[v].program.reads(), -1, value_reads[v]);
  for (size_t q = 0; q < sequences.size(); ++q) {
    const Sequence& s = sequences[q];
    std::vector<int> work = s.min.reads();
    for (int r : s.extent.reads()) work.push_back(r);
    for (const auto& l : s.lets)
      for (int r : l.second.reads()) work.push_back(r);
    for (const Value& v : s.values)
      for (int r : v.program.reads()) work.push_back(r);
    trace(work, static_cast<int>(q), sequence_reads[q]);
    tangled = tangled || sequence_reads[q].other_sequence;
  }
  for (const Reads& r : value_reads) tangled = tangled || r.other_sequence;

  std::map<std::pair<bool, std::set<int>>, size_t> part_of;
  std::vector<std::set<size_t>> part_lets;
  auto part = [&](const Reads& r) -> size_t {
    const bool direct = r.direct || tangled;
    auto [it, fresh] = part_of.try_emplace({direct, direct ? std::set<int>{} : r.components}, parts_.size());
    if (fresh) {
      parts_.emplace_back();
      parts_.back().direct = direct;
      if (!direct) parts_.back().components.assign(r.components.begin(), r.components.end());
      part_lets.emplace_back();
    }
    part_lets[it->second].insert(r.lets.begin(), r.lets.end());
    return it->second;
  };
  for (size_t v = 0; v < values.size(); ++v) parts_[part(value_reads[v])].values.push_back(std::move(values[v]));
  for (size_t q = 0; q < sequences.size(); ++q)
    parts_[part(sequence_reads[q])].sequences.push_back(std::move(sequences[q]));
  for (size_t p = 0; p < parts_.size(); ++p) parts_[p].lets.assign(part_lets[p].begin(), part_lets[p].end());
}

size_t IterationKey::Hash::operator()(const std::vector<int64_t>& k) const {
  uint64_t h = 1469598103934665603ull;
  for (int64_t v : k) h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
  return static_cast<size_t>(h);
}

void IterationKey::enter(const Bindings& env) {
  for (const auto& [name, slot] : frame_.slots) {
    if (bound_here_[slot]) continue;
    auto it = env.find(name);
    frame_.set(slot, it == env.end() ? std::nullopt : std::optional<int64_t>(it->second));
  }
  for (Part& p : parts_) {
    p.memo.clear();
  }
}

std::optional<int64_t> IterationKey::Value::run(SlotFrame& frame) const {
  const std::optional<int64_t> v = program.run(frame);
  if (!v || !alignment) return v;
  return pow2_dividing(*v);
}

bool IterationKey::evaluate(const Part& p, int64_t i, std::vector<std::optional<int64_t>>& key) {
  for (size_t l : p.lets) frame_.set(lets_[l].first, lets_[l].second.run(frame_));
  for (const Value& v : p.values) key.push_back(v.run(frame_));
  bool reusable = true;
  for (const Sequence& s : p.sequences) {
    const auto min = s.min.run(frame_), extent = s.extent.run(frame_);
    key.push_back(min);
    key.push_back(extent);
    if (!min || !extent || *extent > kLongestSequence) {
      key.push_back(i);  // too long to compare: this iteration merges with none
      reusable = false;
      continue;
    }
    for (int64_t j = *min; j < *min + *extent; ++j) {
      frame_.set(s.var, j);
      for (const auto& [slot, program] : s.lets) frame_.set(slot, program.run(frame_));
      for (const Value& v : s.values) key.push_back(v.run(frame_));
    }
  }
  return reusable;
}

void IterationKey::at(int64_t i, std::vector<std::optional<int64_t>>& key) {
  frame_.set(var_, i);
  for (size_t l : components_) frame_.set(lets_[l].first, lets_[l].second.run(frame_));
  key.clear();
  for (Part& p : parts_) {
    if (p.direct || !p.memo_on) {
      evaluate(p, i, key);
      continue;
    }
    components_now_.clear();
    for (int slot : p.components) {
      components_now_.push_back(frame_.values[slot]);
      components_now_.push_back(frame_.known[slot]);
    }
    ++p.lookups;
    if (auto it = p.memo.find(components_now_); it != p.memo.end()) {
      key.insert(key.end(), it->second.begin(), it->second.end());
      continue;
    }
    ++p.misses;
    const size_t from = key.size();
    if (evaluate(p, i, key)) p.memo.emplace(components_now_, std::vector<std::optional<int64_t>>(key.begin() + from, key.end()));
    // Components that differ at nearly every iteration (a token index): looking up costs
    // more than it saves. Judged over many iterations (and entries): the innermost component
    // of a fused loop differs at each of its first iterations.
    if (p.lookups >= 1024 && p.misses * 4 > p.lookups * 3) {
      p.memo_on = false;
      p.memo.clear();
    }
  }
}

}  // namespace npukit::sim
