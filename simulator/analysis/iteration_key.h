// Which iterations of a loop the nest walker may walk once for many. Two iterations whose
// key values are equal take the same path through the loop's body: every loop bound,
// condition, allocation size and store predicate in it has the same value, so they add
// the same transfers, tiles and vector work and differ only in addresses. A prefill's
// attention walks 8,192 tasks that way as 128 runs of equal keys.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "Halide.h"
#include "simulator/analysis/int_eval.h"

namespace npukit::sim {

// The key of one loop, compiled: names the loop does not bind are read from the walker's
// bindings once per entry (`enter`), then `at` gives iteration i's key from slots.
class IterationKey {
 public:
  explicit IterationKey(const Halide::Internal::For* loop);
  void enter(const Bindings& env);
  void at(int64_t i, std::vector<std::optional<int64_t>>& key);

 private:
  // The key's values: the largest pieces of the body's control (loop bounds, conditions,
  // allocation sizes, store predicates, through the lets they read) that read the loop
  // variable and no inner loop's: an extent `max - min + 1` rather than its moving ends. A
  // bound that reads both gives its pieces; at worst the loop variable itself (then no two
  // iterations merge). Lets of the body the values read are evaluated first, in order.
  SlotFrame frame_;
  int var_ = 0;
  std::vector<std::pair<int, IntProgram>> lets_;
  std::vector<IntProgram> values_;
  std::vector<char> bound_here_;  // by slot: the loop variable or one of `lets_`
};

}  // namespace npukit::sim
