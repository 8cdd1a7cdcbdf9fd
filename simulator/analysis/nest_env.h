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
  // A slot's binding, to be put back with `restore` (a let or loop of a sub-nest).
  struct Saved {
    int slot;
    int64_t value;
    char known;
  };
  Saved save(int slot) const { return {slot, frame_.values[slot], frame_.known[slot]}; }
  void restore(const Saved& s) {
    frame_.values[s.slot] = s.value;
    frame_.known[s.slot] = s.known;
  }
  void set(int slot, std::optional<int64_t> v) { frame_.set(slot, v); }

 private:
  SlotFrame frame_;
  std::unordered_map<const Halide::Internal::IRNode*, std::pair<Halide::Expr, IntProgram>> programs_;
  std::unordered_map<const Halide::Internal::IRNode*, int> slots_;
};

// The NestEnv of `nest`, built on first use and kept with the nest (thread_local, as the
// walk is single-threaded per analysis).
NestEnv& nest_env(const Halide::Internal::Stmt& nest);

}  // namespace npukit::sim
