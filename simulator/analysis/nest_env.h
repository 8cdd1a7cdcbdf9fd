// The nest walker's bindings as slots, and the Exprs of one lowered nest compiled once into
// slot programs over them: a name is hashed when an Expr is first compiled, not each time
// the walk evaluates it (a prefill linear evaluates its lets and bounds at every group of
// every K chunk). Kept per nest, as the iteration keys are, for the next analysis of it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "Halide.h"
#include "simulator/analysis/int_eval.h"

namespace npukit::sim {

class NestEnv {
 public:
  // Every slot unknown, then `env`'s names bound: the start of one analysis.
  void reset(const Bindings& env);
  // e's value under the slots (IntProgram's semantics: an unknown name, load or call gives
  // nullopt), compiled on its first evaluation. `e` is kept, so its node's address names it.
  std::optional<int64_t> eval(const Halide::Expr& e);
  // The slot of a loop's or let's name, found once per node.
  int slot(const Halide::Internal::IRNode* node, const std::string& name);
  const SlotFrame& frame() const { return frame_; }
  void set(int slot, std::optional<int64_t> v) { frame_.set(slot, v); }

  // Bindings set for one look down a sub-nest and put back when the scope ends. Scopes
  // nest (the innermost ends first), so one undo stack serves them all: the walk sets
  // names per tile, and a stack of its own per scope was an allocation each time.
  class Scope {
   public:
    explicit Scope(NestEnv& env) : env_(env), mark_(env.undo_.size()) {}
    Scope(const Scope&) = delete;
    ~Scope() {
      for (; env_.undo_.size() > mark_; env_.undo_.pop_back()) {
        const Saved& s = env_.undo_.back();
        env_.frame_.values[s.slot] = s.value;
        env_.frame_.known[s.slot] = s.known;
      }
    }
    void set(int slot, int64_t value) {
      env_.undo_.push_back({slot, env_.frame_.values[slot], env_.frame_.known[slot]});
      env_.frame_.set(slot, value);
    }

   private:
    NestEnv& env_;
    size_t mark_;
  };

 private:
  struct Saved {
    int slot;
    int64_t value;
    char known;
  };
  SlotFrame frame_;
  std::vector<Saved> undo_;
  std::unordered_map<const Halide::Internal::IRNode*, std::pair<Halide::Expr, IntProgram>> programs_;
  std::unordered_map<const Halide::Internal::IRNode*, int> slots_;
};

// The NestEnv of `nest`, built on first use and kept with the nest (thread_local, as the
// walk is single-threaded per analysis).
NestEnv& nest_env(const Halide::Internal::Stmt& nest);

}  // namespace npukit::sim
