// Which iterations of a loop the nest walker may walk once for many. Two iterations whose
// key values are equal take the same path through the loop's body (every loop bound,
// condition, allocation size and store predicate in it has the same value) and their
// transfers' DRAM addresses have the same alignment and steps, so they add the same
// transfers, tiles and vector work. A prefill attention's 8,192 tasks on gemmini-default
// have 256 distinct keys.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "Halide.h"
#include "simulator/analysis/int_eval.h"

namespace npukit::sim {

// The key of one loop, compiled: names the loop does not bind are read from the walker's
// bindings once per entry (`enter`), then `at` gives iteration i's key from slots.
class IterationKey {
 public:
  // `allocated`: every buffer the nest allocates (the others are the op's tensors in DRAM);
  // `outputs`: the op's outputs.
  IterationKey(const Halide::Internal::For* loop, const std::set<std::string>& allocated,
               const std::set<std::string>& outputs);
  void enter(const Bindings& env);
  void at(int64_t i, std::vector<std::optional<int64_t>>& key);

 private:
  // The key's values: the largest pieces of the body's control (loop bounds, conditions,
  // allocation sizes, store predicates, through the lets they read) that read the loop
  // variable and no inner loop's: an extent `max - min + 1` rather than its moving ends. A
  // bound that reads both gives its pieces (or joins a Sequence); at worst the loop
  // variable itself (then no two iterations merge). Lets of the body the values read are
  // evaluated first, in order.
  // An inner loop whose bounds are known per iteration: the values over its iterations of
  // the pieces that read its variable (a chunk's K blocks) are part of the key.
  // A value, or for a transfer's DRAM address the largest power of two dividing it: what
  // the walk keeps of an address is its alignment, so addresses that differ merge.
  struct Value {
    IntProgram program;
    bool alignment;
    std::optional<int64_t> run(SlotFrame& frame) const;
  };
  struct Sequence {
    int var;
    IntProgram min, extent;
    std::vector<std::pair<int, IntProgram>> lets;
    std::vector<Value> values;
  };
  struct Hash {
    size_t operator()(const std::vector<int64_t>& k) const;
  };
  // The values and sequences that read the same components: the lets that read the loop
  // variable itself (a fused loop's head, chunk and token tile), evaluated at every
  // iteration. A part's values are a function of its components, so it is evaluated once
  // per distinct component values (a prefill attention's K blocks once per chunk and head,
  // not once per task) and copied at the other iterations. A part that reads the loop
  // variable itself (`direct`) is evaluated at every iteration.
  struct Part {
    std::vector<int> components;  // slots
    std::vector<size_t> lets;     // indices into lets_: the other lets it reads, in order
    std::vector<Value> values;
    std::vector<Sequence> sequences;
    bool direct = false;
    // Values by component values, per entry; dropped when nearly every iteration misses.
    std::unordered_map<std::vector<int64_t>, std::vector<std::optional<int64_t>>, Hash> memo;
    bool memo_on = true;
    int64_t lookups = 0, misses = 0;
  };
  static constexpr int64_t kLongestSequence = 256;
  SlotFrame frame_;
  int var_ = 0;
  std::vector<std::pair<int, IntProgram>> lets_;
  std::vector<size_t> components_;  // indices into lets_: evaluated at every iteration, in order
  std::vector<Part> parts_;
  std::vector<char> bound_here_;  // by slot: the loop variable or one of `lets_`
  std::vector<int64_t> components_now_;

  void split_into_parts(std::vector<Value> values, std::vector<Sequence> sequences);
  // Appends part p's values at iteration i; false when they read i itself (a sequence too
  // long to compare), so that they are not reused.
  bool evaluate(const Part& p, int64_t i, std::vector<std::optional<int64_t>>& out);
};

}  // namespace npukit::sim
