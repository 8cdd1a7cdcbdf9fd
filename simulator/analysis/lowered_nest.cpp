#include "simulator/analysis/lowered_nest.h"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/ostream.h>

#include "simulator/analysis/iteration_key.h"
#include "simulator/analysis/nest_env.h"

namespace npukit::sim {

using namespace Halide;
using namespace Halide::Internal;
using schedules::npu::NpuPlan;
using schedules::npu::Placement;
using schedules::npu::ShortRuns;

namespace {

// Keeps the nest it is given; changes nothing.
class CapturePass : public IRMutator {
 public:
  explicit CapturePass(Stmt* out) : out_(out) {}
  using IRMutator::mutate;
  Stmt mutate(const Stmt& s) override {
    *out_ = s;
    return s;
  }

 private:
  Stmt* out_;
};

// The loop's variable name without Halide's ".rebased" suffix, last component only.
std::string loop_var(const std::string& loop) {
  std::string s = loop;
  const std::string rebased = ".rebased";
  if (s.size() > rebased.size() && s.compare(s.size() - rebased.size(), rebased.size(), rebased) == 0)
    s.resize(s.size() - rebased.size());
  const size_t dot = s.rfind('.');
  return dot == std::string::npos ? s : s.substr(dot + 1);
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// A name as the schedule wrote it: Halide makes Func names unique per process by adding
// "$<n>" ("acc$4.s1.m"); reports show "acc.s1.m". RDom names ("r$x") are kept.
std::string display_name(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name[i] == '$' && i + 1 < name.size() && std::isdigit(static_cast<unsigned char>(name[i + 1]))) {
      size_t j = i + 1;
      while (j < name.size() && std::isdigit(static_cast<unsigned char>(name[j]))) ++j;
      if (j == name.size() || name[j] == '.') {
        i = j - 1;
        continue;
      }
    }
    out += name[i];
  }
  return out;
}

// Facts about a sub-statement that decide whether a loop around it must be walked
// iteration by iteration (it holds transfers, matrix tiles or loop bounds that move with
// the loop) or can be walked once and multiplied.
struct StmtFacts : public IRVisitor {
  const NpuPlan& plan;
  const std::set<std::string>& outputs;
  bool dram_produce = false, any_produce = false, matrix = false;
  std::set<std::string> stored_outputs;  // the op outputs stored into
  std::set<std::string> control_vars;  // names read by loop bounds, conditions, sizes
  std::vector<std::pair<std::string, Expr>> lets;

  StmtFacts(const NpuPlan& p, const std::set<std::string>& outs) : plan(p), outputs(outs) {}
  using IRVisitor::visit;

  void uses(const Expr& e) {
    struct Vars : IRVisitor {
      std::set<std::string>* out;
      using IRVisitor::visit;
      void visit(const Variable* v) override { out->insert(v->name); }
    } vars;
    vars.out = &control_vars;
    if (e.defined()) e.accept(&vars);
  }
  // Let-bound names that feed a control expression pull their own inputs in.
  void close_over_lets() {
    for (bool changed = true; changed;) {
      changed = false;
      for (const auto& [name, value] : lets) {
        if (!control_vars.count(name)) continue;
        const size_t before = control_vars.size();
        uses(value);
        changed = changed || control_vars.size() != before;
      }
    }
  }
  void visit(const ProducerConsumer* op) override {
    any_produce = true;
    if (op->is_producer) {
      const Placement* p = plan.placement(op->name);
      dram_produce = dram_produce || (p && p->from_dram);
    }
    IRVisitor::visit(op);
  }
  void visit(const Store* op) override {
    if (outputs.count(op->name)) stored_outputs.insert(op->name);
    IRVisitor::visit(op);
  }
  void visit(const For* op) override {
    for (const auto& m : plan.matrix_roles())
      matrix = matrix || starts_with(op->name, m.func + ".s" + std::to_string(m.stage) + ".");
    uses(op->min);
    uses(op->extent);
    IRVisitor::visit(op);
  }
  void visit(const IfThenElse* op) override {
    uses(op->condition);
    IRVisitor::visit(op);
  }
  void visit(const Allocate* op) override {
    for (const Expr& e : op->extents) uses(e);
    IRVisitor::visit(op);
  }
  void visit(const LetStmt* op) override {
    lets.emplace_back(op->name, op->value);
    IRVisitor::visit(op);
  }
  void visit(const Let* op) override {
    lets.emplace_back(op->name, op->value);
    IRVisitor::visit(op);
  }
};

// Element operations of a stored value by vector-unit class. For a float result only
// float operations and conversions count: the integer and boolean ones in a float
// computation are the portable fp16 conversion's bit tricks (a vector unit converts in one
// op) and comparisons folded into selects.
struct OpCounter : public IRVisitor {
  std::map<VectorOp, int64_t> ops;
  bool float_only = false;
  using IRVisitor::visit;
  Halide::Type widest;  // the widest type an operation was counted in: the work's dtype
  template <class Node>
  void add(const Node* op, VectorOp c) {
    if (!float_only || op->type.is_float()) {
      ++ops[c];
      note(op->type);
    }
    IRVisitor::visit(op);
  }
  void note(Halide::Type t) {
    if (t.is_bool()) return;
    t = t.element_of();
    if (!widest.bits() || (t.is_float() && !widest.is_float()) ||
        (t.is_float() == widest.is_float() && t.bits() > widest.bits()))
      widest = t;
  }
  // x / 2^k and x % 2^k are a shift and a mask on a vector unit, not a division.
  static bool is_pow2(const Expr& e) {
    if (const auto* b = e.as<Broadcast>()) return is_pow2(b->value);
    if (const auto* i = e.as<IntImm>()) return i->value > 0 && (i->value & (i->value - 1)) == 0;
    if (const auto* u = e.as<UIntImm>()) return u->value > 0 && (u->value & (u->value - 1)) == 0;
    return false;
  }
  template <class Node>
  void divide(const Node* op) {
    const bool pow2 = is_pow2(op->b);
    add(op, pow2 ? VectorOp::add : VectorOp::div);
  }
  void visit(const Add* op) override { add(op, VectorOp::add); }
  void visit(const Sub* op) override { add(op, VectorOp::add); }
  void visit(const Min* op) override { add(op, VectorOp::add); }
  void visit(const Max* op) override { add(op, VectorOp::add); }
  void visit(const Select* op) override { add(op, VectorOp::add); }
  void visit(const LT* op) override { add(op, VectorOp::add); }
  void visit(const LE* op) override { add(op, VectorOp::add); }
  void visit(const EQ* op) override { add(op, VectorOp::add); }
  void visit(const NE* op) override { add(op, VectorOp::add); }
  void visit(const GT* op) override { add(op, VectorOp::add); }
  void visit(const GE* op) override { add(op, VectorOp::add); }
  void visit(const Mul* op) override { add(op, VectorOp::mul); }
  void visit(const Load*) override {}  // its index is address arithmetic, not data work
  void visit(const Div* op) override { divide(op); }
  void visit(const Mod* op) override { divide(op); }
  // A cast between integer types of one width (uint8 <-> int8) keeps the bits: free, as a
  // reinterpret is.
  static bool same_bits(Halide::Type a, Halide::Type b) {
    return !a.is_float() && !b.is_float() && a.bits() == b.bits();
  }
  void visit(const Cast* op) override {
    if (!same_bits(op->type, op->value.type())) {
      ++ops[VectorOp::convert];
      note(op->type.is_float() || op->value.type().is_float() ? Float(32) : op->type);
    }
    IRVisitor::visit(op);
  }
  void visit(const Call* op) override {
    const std::string& n = op->name;
    if (op->is_intrinsic(Call::reinterpret)) {
      // a bit cast: free
    } else if (n.find("exp") != std::string::npos) {
      ++ops[VectorOp::exp];
    } else if (n.find("sqrt") != std::string::npos) {
      ++ops[VectorOp::rsqrt];
    } else if (!float_only || op->type.is_float()) {
      if (op->is_intrinsic(Call::shift_left) || op->is_intrinsic(Call::shift_right) ||
          op->is_intrinsic(Call::bitwise_and) || op->is_intrinsic(Call::bitwise_or) ||
          op->is_intrinsic(Call::bitwise_xor) || op->is_intrinsic(Call::absd) || op->is_intrinsic(Call::abs)) {
        ++ops[VectorOp::add];
      }
    }
    IRVisitor::visit(op);
  }
};

// A let whose value is data, not an address or a bound: it reads memory, or an earlier
// data let. Its operations belong to the store it feeds.
bool is_data_let(const Expr& value, const std::set<std::string>& data_lets) {
  struct Finder : IRVisitor {
    const std::set<std::string>* data;
    bool found = false;
    using IRVisitor::visit;
    void visit(const Load*) override { found = true; }
    void visit(const Variable* v) override { found = found || data->count(v->name); }
  } f;
  f.data = &data_lets;
  value.accept(&f);
  return f.found;
}

// Loads of a value: (buffer name, index, lanes, alignment facts).
struct LoadFinder : public IRVisitor {
  std::vector<const Load*> loads;
  using IRVisitor::visit;
  void visit(const Load* op) override {
    loads.push_back(op);
    IRVisitor::visit(op);
  }
};

// A loop's key depends only on the loop, the nest's allocations and the outputs: built once
// and kept for the next analysis of the nest (a sweep's every shape, the tuner's every
// candidate). The entry holds the loop, so that its address names no other loop later.
IterationKey& iteration_key(const For* loop, const std::set<std::string>& allocated,
                            const std::set<std::string>& outputs) {
  struct Entry {
    Stmt loop;
    std::set<std::string> allocated, outputs;
    std::unique_ptr<IterationKey> key;
  };
  thread_local std::unordered_multimap<const For*, Entry> keys;
  auto [from, to] = keys.equal_range(loop);
  for (auto it = from; it != to; ++it)
    if (it->second.allocated == allocated && it->second.outputs == outputs) return *it->second.key;
  auto key = std::make_unique<IterationKey>(loop, allocated, outputs);
  return *keys.emplace(loop, Entry{Stmt(loop), allocated, outputs, std::move(key)})->second.key;
}

class NestWalker {
 public:
  NestWalker(const NpuPlan& plan, const std::string& op, const std::vector<std::string>& outputs, NestEnv& nest_env,
             const Bindings& env, Walk walk)
      : plan_(plan), outputs_(outputs.begin(), outputs.end()), env_(nest_env), walk_(walk) {
    result_.op = op;
    env_.reset(env);
  }

  OpAnalysis run(const Stmt& s) {
    struct Allocations : IRVisitor {
      std::set<std::string>* out;
      using IRVisitor::visit;
      void visit(const Allocate* op) override {
        out->insert(op->name);
        IRVisitor::visit(op);
      }
    } allocations;
    allocations.out = &nest_allocations_;
    s.accept(&allocations);
    walk(s);
    finish();
    return std::move(result_);
  }

 private:
  const NpuPlan& plan_;
  std::set<std::string> outputs_;
  NestEnv& env_;
  const Walk walk_;
  int64_t mult_ = 1;
  int64_t iterations_ = 0;
  std::vector<std::string> loops_;  // enclosing loops, outermost first
  std::set<std::string> allocated_;  // on-chip (and host) allocations in scope
  std::set<std::string> nest_allocations_;  // every allocation of the nest
  std::map<std::string, int64_t> element_bytes_;
  OpAnalysis result_;
  std::map<std::string, size_t> loop_index_, alloc_index_, vector_index_;
  std::map<std::tuple<std::string, int64_t, int64_t, int64_t, int64_t>, size_t> transfer_index_;
  std::map<std::tuple<size_t, int64_t, int64_t, int64_t>, size_t> matrix_index_;
  std::map<std::string, std::pair<int64_t, std::string>> staged_;  // func → (copies, loop)
  std::map<std::string, std::set<Unit>> readers_;  // which units load each allocation
  std::set<std::string> data_let_names_;
  std::unordered_map<const LetStmt*, bool> data_let_;
  std::vector<Expr> data_lets_;  // values of the data lets in scope

  [[noreturn]] void fail(const std::string& what) const {
    std::string where = loops_.empty() ? "(top level)" : loops_.back();
    throw std::runtime_error("npu analysis of " + result_.op + ": " + what + " (in loop " + where + ")");
  }

  // `what` and `name` say what `e` is (built into a message only when it fails).
  int64_t eval(const Expr& e, const char* what, const std::string& name) const {
    auto v = env_.eval(e);
    if (!v) fail(fmt::format("cannot evaluate {}{} = {}", what, name, fmt::streamed(e)));
    return *v;
  }

  std::string current_loop() const { return loops_.empty() ? "" : loops_.back(); }

  // What decides how a loop is walked, computed once per loop (the walk visits inner loops
  // once per tile).
  struct LoopFacts {
    bool any_produce = false, output_store = false, iterate = false;
    std::string output;  // the one output the loop stores into ("" when none or several)
    int matrix_role = -1;  // the matrix role whose tile this loop is, if any
    int slot = 0;          // of the loop's variable in env_
    bool noted = false;    // in result_.loops
    IterationKey* key = nullptr;  // for a loop walked iteration by iteration: which ones merge
  };
  std::map<const For*, LoopFacts> loop_facts_;
  LoopFacts& loop_facts(const For* op) {
    auto it = loop_facts_.find(op);
    if (it != loop_facts_.end()) return it->second;
    StmtFacts f(plan_, outputs_);
    op->body.accept(&f);
    f.close_over_lets();
    LoopFacts lf;
    lf.slot = env_.slot(op, op->name);
    lf.any_produce = f.any_produce;
    lf.output_store = f.stored_outputs.size() == 1;
    if (lf.output_store) lf.output = *f.stored_outputs.begin();
    lf.iterate = f.dram_produce || !f.stored_outputs.empty() || f.matrix || f.control_vars.count(op->name);
    if (lf.iterate && walk_ == Walk::merged) lf.key = &iteration_key(op, nest_allocations_, outputs_);
    // The matrix tile: the outermost loop of the matrix stage over one of its m, n, k dims
    // with no staging inside. Loops of the stage's other dims outside it (a prefill's
    // tokens sharing a K block) repeat the tile.
    for (size_t i = 0; i < plan_.matrix_roles().size() && !lf.any_produce && lf.matrix_role < 0; ++i) {
      const auto& m = plan_.matrix_roles()[i];
      const std::string v = loop_var(op->name);
      if (starts_with(op->name, m.func + ".s" + std::to_string(m.stage) + ".") &&
          (v == m.m_var || v == m.n_var || v == m.k_var))
        lf.matrix_role = static_cast<int>(i);
    }
    return loop_facts_.emplace(op, std::move(lf)).first->second;
  }

  void walk(const Stmt& s) {
    if (!s.defined()) return;
    if (const auto* op = s.as<LetStmt>()) {
      // Whether a let is data depends on the lets above it only: once per let, not per tile.
      auto [known, fresh] = data_let_.try_emplace(op, false);
      if (fresh) known->second = is_data_let(op->value, data_let_names_);
      if (known->second) {
        data_let_names_.insert(op->name);
        data_lets_.push_back(op->value);
        walk(op->body);
        data_lets_.pop_back();
        data_let_names_.erase(op->name);
        return;
      }
      NestEnv::Scope scope(env_);
      if (auto v = env_.eval(op->value)) scope.set(env_.slot(op, op->name), *v);
      walk(op->body);
    } else if (const auto* op = s.as<For>()) {
      walk_for(op);
    } else if (const auto* op = s.as<ProducerConsumer>()) {
      const Placement* p = plan_.placement(op->name);
      if (op->is_producer && p && p->from_dram) {
        transfer_in(op);
      } else {
        walk(op->body);
      }
    } else if (const auto* op = s.as<Allocate>()) {
      allocate(op);
    } else if (const auto* op = s.as<Block>()) {
      walk(op->first);
      walk(op->rest);
    } else if (const auto* op = s.as<IfThenElse>()) {
      auto c = env_.eval(op->condition);
      if (!c || *c) {
        walk(op->then_case);  // an unknown condition is walked as taken
      } else {
        walk(op->else_case);
      }
    } else if (const auto* op = s.as<Store>()) {
      store(op);
    } else if (const auto* op = s.as<Realize>()) {
      walk(op->body);
    } else if (const auto* op = s.as<Fork>()) {
      walk(op->first);
      walk(op->rest);
    } else if (const auto* op = s.as<Acquire>()) {
      walk(op->body);
    } else if (const auto* op = s.as<Atomic>()) {
      walk(op->body);
    }
    // AssertStmt, Evaluate, Free, Prefetch: nothing to count.
  }

  void note_loop(const For* op, int64_t min, int64_t extent) {
    if (loop_index_.count(op->name)) return;
    loop_index_[op->name] = result_.loops.size();
    LoopInfo l;
    l.name = op->name;
    l.min = min;
    l.extent = extent;
    l.depth = static_cast<int>(loops_.size());
    l.parallel = op->for_type == ForType::Parallel;
    if (l.parallel && result_.parallel_extent == 1) result_.parallel_extent = extent;
    result_.loops.push_back(l);
  }


  void walk_for(const For* op) {
    const int64_t min = eval(op->min, "the min of loop ", op->name);
    const int64_t extent = std::max<int64_t>(0, eval(op->extent, "the extent of loop ", op->name));
    LoopFacts& facts = loop_facts(op);
    if (!facts.noted) note_loop(op, min, extent);  // (once per node: the first visit's bounds)
    facts.noted = true;
    if (facts.matrix_role >= 0) {
      matrix_tile(op, static_cast<size_t>(facts.matrix_role));
      return;
    }
    if (facts.output_store && !facts.any_produce) {
      transfer_out(op, facts.output);
      return;
    }
    const bool iterate = facts.iterate;
    loops_.push_back(op->name);
    if (iterate && walk_ == Walk::merged) {
      walk_groups(op, facts.slot, min, extent, *facts.key);
    } else if (iterate) {
      for (int64_t i = min; i < min + extent; ++i) walk_iteration(op, facts.slot, i, 1);
    } else if (extent > 0) {
      env_.set(facts.slot, min);
      const int64_t saved = mult_;
      mult_ *= extent;
      walk(op->body);
      mult_ = saved;
    }
    env_.set(facts.slot, std::nullopt);
    loops_.pop_back();
  }

  void count_iteration() {
    if (++iterations_ > 20000000)
      fail("more than 20,000,000 loop iterations; the analysis walks each tile: use larger tiles");
  }

  // Iteration i, standing for `times` iterations that take the same path.
  void walk_iteration(const For* op, int slot, int64_t i, int64_t times) {
    count_iteration();
    env_.set(slot, i);
    const int64_t saved = mult_;
    mult_ *= times;
    walk(op->body);
    mult_ = saved;
  }

  // Iterations grouped by their keys, each group walked once at its first iteration and
  // counted for all: the key holds everything that decides the path through the body and
  // the alignment of every DRAM address, so the counts and alignments are exact.
  void walk_groups(const For* op, int slot, int64_t min, int64_t extent, IterationKey& key) {
    key.enter(env_.frame());
    struct Hash {
      size_t operator()(const std::vector<std::optional<int64_t>>& k) const {
        uint64_t h = 1469598103934665603ull;
        for (const auto& v : k) h = (h ^ (v ? static_cast<uint64_t>(*v) : 0x9e3779b97f4a7c15ull)) * 1099511628211ull;
        return static_cast<size_t>(h);
      }
    };
    std::unordered_map<std::vector<std::optional<int64_t>>, size_t, Hash> group_of;
    std::vector<std::pair<int64_t, int64_t>> groups;  // (first iteration, iterations)
    std::vector<std::optional<int64_t>> k;
    for (int64_t i = min; i < min + extent; ++i) {
      count_iteration();
      key.at(i, k);
      auto [it, fresh] = group_of.try_emplace(k, groups.size());
      if (fresh) groups.emplace_back(i, 0);
      ++groups[it->second].second;
    }
    for (const auto& [first, n] : groups) walk_iteration(op, slot, first, n);
  }

  void allocate(const Allocate* op) {
    int64_t elems = 1;
    for (const Expr& e : op->extents) elems *= eval(e, "an extent of allocation ", op->name);
    const int64_t bytes = elems * op->type.bytes();
    element_bytes_[op->name] = op->type.bytes();
    if (const Placement* p = plan_.placement(op->name)) {
      auto [it, fresh] = alloc_index_.emplace(op->name, result_.allocations.size());
      if (fresh) {
        Allocation a;
        a.func = op->name;
        a.buffer = p->buffer;
        a.loop = current_loop();
        a.element_bytes = op->type.bytes();
        a.double_buffered = p->double_buffered;
        a.source = p->source;
        result_.allocations.push_back(a);
      }
      Allocation& a = result_.allocations[it->second];
      a.bytes = std::max(a.bytes, bytes);
    }
    allocated_.insert(op->name);
    walk(op->body);
    allocated_.erase(op->name);
  }

  // A copy nest: loops from the top down to the one store, with their bounds evaluated
  // with every loop at its min, or the loop named `step` one past it.
  struct CopyShape {
    std::vector<std::pair<const For*, int64_t>> loops;  // (loop, extent), outermost first
    int64_t lanes = 1;
    std::optional<int64_t> dram_index;  // element index of the DRAM side
    std::string dram;                   // the DRAM buffer
    const Store* store = nullptr;
    std::vector<Expr> data_lets;        // values computed on the way (an epilogue)
  };

  // Descends `s` to the store into `dest`; `dram_is_store`: the DRAM side is the store
  // (an output), else the load from a buffer that is not allocated here (an input).
  bool descend(const Stmt& s, const std::string& dest, bool dram_is_store, NestEnv::Scope& env,
               const std::string* step, CopyShape& out) {
    if (!s.defined()) return false;
    if (const auto* op = s.as<LetStmt>()) {
      if (auto v = env_.eval(op->value)) {
        env.set(env_.slot(op, op->name), *v);
      } else {
        out.data_lets.push_back(op->value);
      }
      return descend(op->body, dest, dram_is_store, env, step, out);
    }
    if (const auto* op = s.as<For>()) {
      auto mn = env_.eval(op->min);
      auto ex = env_.eval(op->extent);
      if (!mn || !ex) fail("cannot evaluate the bounds of copy loop " + op->name);
      out.loops.emplace_back(op, std::max<int64_t>(0, *ex));
      env.set(env_.slot(op, op->name), step && op->name == *step ? *mn + 1 : *mn);
      return descend(op->body, dest, dram_is_store, env, step, out);
    }
    if (const auto* op = s.as<Block>()) {
      return descend(op->first, dest, dram_is_store, env, step, out) ||
             descend(op->rest, dest, dram_is_store, env, step, out);
    }
    if (const auto* op = s.as<IfThenElse>()) {
      auto c = env_.eval(op->condition);
      return descend((!c || *c) ? op->then_case : op->else_case, dest, dram_is_store, env, step, out);
    }
    if (const auto* op = s.as<ProducerConsumer>()) return descend(op->body, dest, dram_is_store, env, step, out);
    if (const auto* op = s.as<Store>()) {
      if (op->name != dest) return false;
      out.store = op;
      out.lanes = op->value.type().lanes();
      Expr index = op->index;
      if (!dram_is_store) {
        LoadFinder lf;
        op->value.accept(&lf);
        for (const Load* l : lf.loads) {
          if (!allocated_.count(l->name)) {
            index = l->index;
            out.dram = l->name;
            break;
          }
        }
      } else {
        out.dram = op->name;
      }
      if (const auto* r = index.as<Ramp>()) index = r->base;
      out.dram_index = env_.eval(index);
      return true;
    }
    return false;
  }

  CopyShape copy_shape(const Stmt& s, const std::string& dest, bool dram_is_store, const std::string* step = nullptr) {
    NestEnv::Scope env(env_);
    CopyShape c;
    if (!descend(s, dest, dram_is_store, env, step, c)) fail("no store into " + dest + " in its copy");
    return c;
  }

  // Elements stored into `dest` by `s`, over every path: a vectorized copy is a main loop
  // of whole vectors and a tail loop, both of which move bytes.
  int64_t count_stores(const Stmt& s, const std::string& dest, NestEnv::Scope& env) {
    if (!s.defined()) return 0;
    if (const auto* op = s.as<LetStmt>()) {
      if (auto v = env_.eval(op->value)) env.set(env_.slot(op, op->name), *v);
      return count_stores(op->body, dest, env);
    }
    if (const auto* op = s.as<For>()) {
      auto mn = env_.eval(op->min);
      auto ex = env_.eval(op->extent);
      if (!mn || !ex) fail("cannot evaluate the bounds of copy loop " + op->name);
      if (*ex <= 0) return 0;
      env.set(env_.slot(op, op->name), *mn);
      return *ex * count_stores(op->body, dest, env);
    }
    if (const auto* op = s.as<Block>()) return count_stores(op->first, dest, env) + count_stores(op->rest, dest, env);
    if (const auto* op = s.as<IfThenElse>()) {
      auto c = env_.eval(op->condition);
      return count_stores((!c || *c) ? op->then_case : op->else_case, dest, env);
    }
    if (const auto* op = s.as<ProducerConsumer>()) return count_stores(op->body, dest, env);
    if (const auto* op = s.as<Store>()) return op->name == dest ? active_lanes(op) : 0;
    return 0;
  }

  // Lanes a store writes: all of them, or for a tail's predicated store
  // (ramp(base, 1, L) <= broadcast(limit), or <) the lanes whose index passes.
  int64_t active_lanes(const Store* st) {
    const int64_t lanes = st->value.type().lanes();
    if (is_const_one(st->predicate)) return lanes;
    const Expr& p = st->predicate;
    const Ramp* r = nullptr;
    const Broadcast* b = nullptr;
    bool strict = false;
    if (const auto* le = p.as<LE>()) {
      r = le->a.as<Ramp>(), b = le->b.as<Broadcast>();
    } else if (const auto* lt = p.as<LT>()) {
      r = lt->a.as<Ramp>(), b = lt->b.as<Broadcast>(), strict = true;
    }
    if (!r || !b || !is_const_one(r->stride)) return lanes;  // unknown shape: all lanes (an upper bound)
    auto base = env_.eval(r->base);
    auto limit = env_.eval(b->value);
    if (!base || !limit) return lanes;
    const int64_t last = strict ? *limit - 1 : *limit;  // lanes i with base + i <= last
    return std::clamp<int64_t>(last - *base + 1, 0, lanes);
  }

  // A copy of `func` in (a produce of a staged Func) or out (`func` is the output stored).
  void record_transfer(const std::string& func, const Stmt& body, bool out) {
    const std::string& dest = func;
    const CopyShape c = copy_shape(body, dest, out);  // the first (main) path
    if (!c.dram_index) fail("cannot evaluate the DRAM address of the copy of " + func);
    const int64_t esize = c.store->value.type().bytes();
    NestEnv::Scope env(env_);
    const int64_t elements = count_stores(body, dest, env);
    if (elements == 0) return;
    // Rows: the loops around the innermost one. Contiguous rows: the innermost loop steps
    // one vector along the DRAM tensor (then the tail finishes the row).
    int64_t rows = 1, stride = 0;
    for (size_t i = 0; i + 1 < c.loops.size(); ++i) rows *= c.loops[i].second;
    int64_t row_elems = rows > 0 ? elements / rows : elements;
    if (!c.loops.empty()) {
      const CopyShape next = copy_shape(body, dest, out, &c.loops.back().first->name);
      const int64_t delta = next.dram_index.value_or(0) - *c.dram_index;
      const bool contiguous = delta == c.lanes || c.loops.back().second <= 1;
      if (contiguous && c.loops.size() >= 2) {
        const CopyShape outer = copy_shape(body, dest, out, &c.loops[c.loops.size() - 2].first->name);
        stride = (outer.dram_index.value_or(0) - *c.dram_index) * esize;
      } else if (!contiguous) {
        row_elems = c.lanes;  // a strided gather: every vector is its own run
        rows = elements / c.lanes;
        stride = delta * esize;
      }
    }
    Transfer t;
    t.func = func;
    t.tensor = c.dram;
    const Placement* p = plan_.placement(func);
    t.buffer = p ? p->buffer : "";
    t.loop = current_loop();
    t.direction = out ? Direction::out : Direction::in;
    t.rows = rows;
    t.row_bytes = row_elems * esize;
    t.stride_bytes = t.rows > 1 ? stride : 0;
    if (t.rows > 1 && t.stride_bytes == t.row_bytes) {  // back-to-back rows: one run
      t.row_bytes *= t.rows;
      t.rows = 1;
      t.stride_bytes = 0;
    }
    t.double_buffered = p && p->double_buffered;
    t.element_bytes = esize;
    if (p) t.source = p->source;
    if (const ShortRuns* s = plan_.short_runs_of(func)) {
      t.short_runs = s->why;
      if (!t.source.known()) t.source = s->source;
    }
    if (p && p->fractal_row_bytes > 0) {  // NZ on chip: the innermost copy loop walks K
      t.fractal_row_bytes = p->fractal_row_bytes;
      t.k_run_bytes = (c.loops.empty() ? 1 : c.loops.back().second) * c.lanes * esize;
    }
    const auto key = std::make_tuple(func + (out ? ">" : "<"), t.rows, t.row_bytes, t.stride_bytes, int64_t(out));
    auto [it, fresh] = transfer_index_.emplace(key, result_.transfers.size());
    if (fresh) {
      t.count = 0;
      result_.transfers.push_back(t);
    }
    Transfer& r = result_.transfers[it->second];
    r.count += mult_;
    r.base_alignment = std::min(r.base_alignment, pow2_dividing(*c.dram_index * esize));
    if (t.rows > 1) r.base_alignment = std::min(r.base_alignment, pow2_dividing(t.stride_bytes));
  }

  void transfer_in(const ProducerConsumer* op) {
    auto& [count, loop] = staged_[op->name];
    count += mult_;
    loop = current_loop();
    record_transfer(op->name, op->body, false);
  }

  void transfer_out(const For* op, const std::string& output) {
    record_transfer(output, Stmt(op), true);
    // An epilogue computed on the way out (requantization) is vector work.
    const CopyShape c = copy_shape(Stmt(op), output, true);
    OpCounter ops;
    ops.float_only = c.store->value.type().is_float();
    c.store->value.accept(&ops);
    for (const Expr& e : c.data_lets) e.accept(&ops);
    note_readers(c.store->value, c.data_lets, ops.ops.empty() ? Unit::dma : Unit::vector);
    if (!ops.ops.empty()) {
      int64_t elements = c.lanes;
      for (const auto& l : c.loops) elements *= l.second;
      add_vector_work(output, c.store, elements * mult_, ops);
    }
  }

  void matrix_tile(const For* op, size_t role) {
    const auto& m = plan_.matrix_roles()[role];
    CopyShape c = copy_shape(Stmt(op), m.func, true);
    int64_t extent[3] = {1, 1, 1};
    std::string names[3];
    for (const auto& [loop, ext] : c.loops) {
      const std::string& name = loop->name;
      const std::string v = loop_var(name);
      const int i = v == m.m_var ? 0 : v == m.n_var ? 1 : v == m.k_var ? 2 : -1;
      if (i < 0) fail("loop " + name + " of the matrix stage of " + m.func + " is none of its m, n, k loops");
      extent[i] = ext * (i == 1 ? c.lanes : 1);
      names[i] = name;
    }
    // An N dim vectorized whole has no loop: its extent is the store's lanes.
    if (names[1].empty()) extent[1] = c.lanes;
    if (extent[0] * extent[1] * extent[2] == 0) return;
    note_readers(c.store->value, c.data_lets, Unit::matrix);
    // Loop partitioning (a likely() clamp in the algorithm) cuts one tile loop into
    // siblings ("si", then "si.rebased") inside the same iteration of the loop around
    // them: the unit still computes one tile, of their summed extent along that dim.
    const std::string outer_var = loop_var(op->name);
    if (last_tile_.valid && last_tile_.role == role && last_tile_.walk_mark == iterations_ &&
        last_tile_.outer_var == outer_var) {
      const int dim = loop_var(names[0]) == outer_var ? 0 : loop_var(names[1]) == outer_var ? 1 : 2;
      bool same_others = true;
      for (int i = 0; i < 3; ++i) same_others = same_others && (i == dim || extent[i] == last_tile_.extent[i]);
      if (same_others) {
        MatrixWork& prev = result_.matrix[last_tile_.index];
        prev.count -= mult_;
        prev.useful_macs -= mult_ * last_tile_.extent[0] * last_tile_.extent[1] * last_tile_.extent[2];
        extent[dim] += last_tile_.extent[dim];
        names[dim] = last_tile_.names[dim];
      }
    }
    const auto key = std::make_tuple(role, extent[0], extent[1], extent[2]);
    auto [it, fresh] = matrix_index_.emplace(key, result_.matrix.size());
    if (fresh) {
      MatrixWork w;
      w.func = m.func;
      w.dtype = m.dtype;
      w.m = extent[0];
      w.n = extent[1];
      w.k = extent[2];
      w.m_loop = names[0];
      w.n_loop = names[1];
      w.k_loop = names[2];
      w.source = m.source;
      int64_t* whole[3] = {&w.m_whole, &w.n_whole, &w.k_whole};
      for (size_t i = 0; i < 3 && i < m.whole.size(); ++i)
        if (m.whole[i].defined()) *whole[i] = env_.eval(m.whole[i]).value_or(0);
      result_.matrix.push_back(w);
    }
    MatrixWork& w = result_.matrix[it->second];
    w.count += mult_;
    w.useful_macs += mult_ * extent[0] * extent[1] * extent[2];
    last_tile_ = LastTile{true, role, iterations_, outer_var, it->second, {extent[0], extent[1], extent[2]},
                          {names[0], names[1], names[2]}};
  }

  // The matrix tile recorded last, to merge the pieces of a partitioned tile loop.
  struct LastTile {
    bool valid = false;
    size_t role = 0;
    int64_t walk_mark = 0;  // iterations_ when it was recorded: same value = same enclosing iteration
    std::string outer_var;
    size_t index = 0;
    int64_t extent[3] = {1, 1, 1};
    std::string names[3];
  };
  LastTile last_tile_;

  // Every allocation `value` (and `lets`) loads is read by `unit`.
  void note_readers(const Expr& value, const std::vector<Expr>& lets, Unit unit) {
    LoadFinder lf;
    value.accept(&lf);
    for (const Expr& e : lets) e.accept(&lf);
    for (const Load* l : lf.loads)
      if (plan_.placement(l->name)) readers_[l->name].insert(unit);
  }

  // `first`: the store's first visit, when its accesses' alignment (a fact of the node) is read.
  void add_vector_work(const std::string& func, const Store* st, int64_t elements, const OpCounter& counted,
                       bool first = true) {
    const std::map<VectorOp, int64_t>& per_element = counted.ops;
    auto [it, fresh] = vector_index_.emplace(func, result_.vector.size());
    if (fresh) {
      VectorWork v;
      v.func = func;
      const Placement* p = plan_.placement(func);
      v.buffer = p ? p->buffer : "";
      if (p) v.source = p->source;
      v.lanes = st->value.type().lanes();
      // The arithmetic type, not the stored one: an int8 requantization computes in int32.
      const Type t = counted.widest.bits() ? counted.widest : st->value.type().element_of();
      v.dtype = t.is_float() ? (t.bits() == 16 ? Dtype::fp16 : Dtype::fp32) : t.bits() <= 8 ? Dtype::int8 : Dtype::int32;
      result_.vector.push_back(v);
    }
    VectorWork& v = result_.vector[it->second];
    v.elements += elements;
    for (const auto& [cls, n] : per_element) v.ops[cls] += n * elements;
    // Alignment of vector accesses to on-chip buffers, from Halide's modulus facts.
    if (first && st->value.type().lanes() > 1) {
      auto note = [&](const std::string& name, const ModulusRemainder& a, int64_t esize) {
        if (!plan_.placement(name)) return;
        const int64_t g = a.modulus == 0 ? a.remainder : std::gcd(a.modulus, a.remainder);
        v.access_alignment = std::min(v.access_alignment, pow2_dividing(g) * esize);
      };
      note(st->name, st->alignment, st->value.type().bytes());
      LoadFinder lf;
      st->value.accept(&lf);
      for (const Load* l : lf.loads) {
        if (l->type.lanes() > 1) note(l->name, l->alignment, l->type.bytes());  // scalars broadcast are not vector accesses
      }
    }
  }

  // What a store computes depends on the node and the data lets around it, never on the
  // iteration: counted once per node (a merged walk still visits a store per run).
  std::unordered_map<const Store*, OpCounter> store_ops_;

  void store(const Store* op) {
    auto [it, fresh] = store_ops_.try_emplace(op);
    OpCounter& ops = it->second;
    if (fresh) {
      if (outputs_.count(op->name)) fail("a store into output " + op->name + " outside a copy loop");
      ops.float_only = op->value.type().is_float();
      op->value.accept(&ops);
      for (const Expr& e : data_lets_) e.accept(&ops);
      if (!ops.ops.empty()) note_readers(op->value, data_lets_, Unit::vector);
    }
    if (ops.ops.empty()) return;  // plain copies and initial values
    add_vector_work(op->name, op, op->value.type().lanes() * mult_, ops, fresh);
  }

  void finish() {
    for (Allocation& a : result_.allocations) {
      auto it = readers_.find(a.func);
      if (it != readers_.end()) a.readers.assign(it->second.begin(), it->second.end());
    }
    for (LoopInfo& l : result_.loops) l.name = display_name(l.name);
    for (Allocation& a : result_.allocations) a.func = display_name(a.func), a.loop = display_name(a.loop);
    for (Transfer& t : result_.transfers)
      t.func = display_name(t.func), t.tensor = display_name(t.tensor), t.loop = display_name(t.loop);
    // Pieces merged into a whole partitioned tile leave entries with no tiles.
    result_.matrix.erase(std::remove_if(result_.matrix.begin(), result_.matrix.end(),
                                        [](const MatrixWork& w) { return w.count == 0; }),
                         result_.matrix.end());
    for (MatrixWork& w : result_.matrix) {
      w.func = display_name(w.func);
      w.m_loop = display_name(w.m_loop), w.n_loop = display_name(w.n_loop), w.k_loop = display_name(w.k_loop);
    }
    for (VectorWork& v : result_.vector) v.func = display_name(v.func);
    // The pipelined loop is the one the most frequent double-buffered copy is issued in
    // (the most frequent copy when none is double-buffered).
    int64_t best = 0;
    bool best_db = false;
    for (const auto& [func, cl] : staged_) {
      const Placement* p = plan_.placement(func);
      const bool db = p && p->double_buffered;
      if ((db && !best_db) || (db == best_db && cl.first > best)) {
        best = cl.first, best_db = db;
        result_.tiles = cl.first;
        result_.tile_loop = cl.second;
      }
    }
    if (best == 0) result_.tiles = 1;
    result_.tile_loop = display_name(result_.tile_loop);
  }
};

}  // namespace

Stmt capture_lowered_nest(schedules::npu::NpuPipeline& p, const Target& target) {
  Stmt nest;
  p.pipeline.clear_custom_lowering_passes();
  p.pipeline.add_custom_lowering_pass(new CapturePass(&nest));
  p.pipeline.compile_to_module(p.arguments(), p.op + "_npu", target);
  p.pipeline.clear_custom_lowering_passes();
  if (!nest.defined()) throw std::runtime_error("npu analysis of " + p.op + ": the lowering pass saw no nest");
  return nest;
}

void bind_dense_buffer(Bindings& env, const std::string& name, const std::vector<int64_t>& extents) {
  int64_t stride = 1;
  for (size_t i = 0; i < extents.size(); ++i) {
    const std::string d = std::to_string(i);
    env[name + ".min." + d] = 0;
    env[name + ".extent." + d] = extents[i];
    env[name + ".stride." + d] = stride;
    stride *= extents[i];
  }
}

OpAnalysis analyse_nest(const Stmt& nest, const NpuPlan& plan, const std::string& op,
                        const std::vector<std::string>& outputs, const Bindings& env, Walk walk) {
  return NestWalker(plan, op, outputs, nest_env(nest), env, walk).run(nest);
}

}  // namespace npukit::sim
