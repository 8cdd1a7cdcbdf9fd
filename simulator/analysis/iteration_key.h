// Which iterations of a loop the nest walker may walk once for many. Two iterations whose
// key values are equal take the same path through the loop's body (every loop bound,
// condition, allocation size and store predicate in it has the same value) and their
// transfers' DRAM addresses have the same alignment and steps, so they add the same
// transfers, tiles and vector work. A prefill attention's 8,192 tasks on gemmini-default
// have 28 distinct keys.
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
// slots once per entry (`enter`), then `at` gives iteration i's key from slots.
class IterationKey {
 public:
  // `allocated`: every buffer the nest allocates (the others are the op's tensors in DRAM);
  // `outputs`: the op's outputs.
  IterationKey(const Halide::Internal::For* loop, const std::set<std::string>& allocated,
               const std::set<std::string>& outputs);
  void enter(const SlotFrame& env);
  void at(int64_t i, std::vector<std::optional<int64_t>>& key);

 private:
  // The key's values: the largest pieces of the body's control (loop bounds, conditions,
  // allocation sizes, store predicates, through the lets they read) that read the loop
  // variable and no inner loop's: an extent `max - min + 1` rather than its moving ends. A
  // bound that reads both gives its pieces (or joins a sequence); at worst the loop
  // variable itself (then no two iterations merge). Lets of the body the values read are
  // evaluated first, in order.
  // An inner loop whose bounds are known per iteration: the values over its iterations of
  // the pieces that read its variable (a chunk's K blocks) are part of the key.
  // A value, or for a transfer's DRAM address the largest power of two dividing it: what
  // the walk keeps of an address is its alignment, so addresses that differ merge.
  //
  // How they are computed: each value is split into sums of its terms (`Sum`) by what the
  // terms read: the components (the lets that read the loop variable itself, evaluated at
  // every iteration: a fused loop's head, chunk and token tile), a sequence's own variable,
  // the loop variable itself. The sums of one kind form a `Part`, a function of its
  // components: it is evaluated once per distinct component values (a prefill attention's
  // K blocks once per chunk and head, not once per task) and reused at the other
  // iterations; a part that reads the loop variable itself (`direct`) is evaluated at every
  // iteration. A value is then its sums added up (and its alignment taken): the key is the
  // same as evaluating each value whole, in wrapping arithmetic as IntProgram computes.
  struct Sequence {
    int var;
    IntProgram min, extent;
    std::vector<std::pair<int, IntProgram>> lets;
    std::vector<IntProgram> values;  // sums, per iteration of the inner loop
  };
  struct Hash {
    size_t operator()(const std::vector<int64_t>& k) const;
  };
  // A part's values: its plain sums, then per sequence `min, extent`, then the sums per
  // inner iteration (or the iteration itself when the sequence is too long to compare).
  struct Result {
    std::vector<std::optional<int64_t>> v;
    std::vector<size_t> sequence_at;  // where each sequence's min is in v
    bool reusable = true;             // false: it holds the iteration (a sequence too long)
  };
  struct Part {
    std::vector<int> components;  // slots
    std::vector<size_t> lets;     // indices into lets_: the other lets it reads, in order
    std::vector<IntProgram> values;
    std::vector<Sequence> sequences;
    bool direct = false;
    // Results by component values, per entry; dropped when nearly every iteration misses.
    std::unordered_map<std::vector<int64_t>, Result, Hash> memo;
    bool memo_on = true;
    int64_t lookups = 0, misses = 0;
    Result scratch;
    int64_t fetched = -1;  // the `generation_` `result` is of
    const Result* result = nullptr;
  };
  struct Sum {
    int part, index;  // a plain sum of a part, or (in a sequence) the index of the sum among its values
  };
  struct Output {  // a value of the key outside the sequences
    std::vector<Sum> sums;
    bool alignment;
  };
  struct SequenceOutput {
    std::vector<std::pair<int, int>> copies;  // (part, sequence in it): the loop's sums by part, same bounds
    struct Value {
      std::vector<std::pair<int, int>> in_copy;  // (copy, sum)
      std::vector<Sum> plain;                    // sums that do not read the inner loop's variable
      bool alignment;
    };
    std::vector<Value> values;
  };
  // Values that read the same components (through their parts) are computed together, once
  // per distinct component values as a part is; their parts are evaluated only then.
  struct Group {
    std::vector<int> components;  // slots
    bool direct = false;
    std::vector<int> outputs, sequence_outputs;
    std::unordered_map<std::vector<int64_t>, std::vector<std::optional<int64_t>>, Hash> memo;
    bool memo_on = true;
    int64_t lookups = 0, misses = 0;
  };
  static constexpr int64_t kLongestSequence = 256;
  SlotFrame frame_;
  // Which of `env`'s slots each slot the loop does not bind reads (-1: none), found by
  // name once per frame and size rather than at every entry.
  std::vector<std::pair<int, int>> from_;
  const SlotFrame* entered_from_ = nullptr;
  size_t entered_slots_ = 0;
  int var_ = 0;
  std::vector<std::pair<int, IntProgram>> lets_;
  std::vector<size_t> components_;  // indices into lets_: evaluated at every iteration, in order
  std::vector<Part> parts_;
  std::vector<Output> outputs_;
  std::vector<SequenceOutput> sequence_outputs_;
  std::vector<char> bound_here_;  // by slot: the loop variable or one of `lets_`
  std::vector<int64_t> components_now_;
  std::vector<Group> groups_;
  int64_t generation_ = 0;  // counts calls of `at`
  std::vector<std::optional<int64_t>> values_now_;

  struct Piece {
    Halide::Expr e;
    bool alignment;
  };
  void split_into_parts(std::vector<Piece> values, std::vector<std::pair<Sequence, std::vector<Piece>>> sequences);
  // Part p's values at the current iteration (`Result::reusable`: not when a sequence is
  // too long to compare).
  void evaluate(const Part& p, Result& out);
  const Result& fetch(int part);
  std::optional<int64_t> combine(const std::vector<Sum>& sums);
  // Appends the group's values at iteration i; false when they hold i (not to be reused).
  bool compute(const Group& g, int64_t i, std::vector<std::optional<int64_t>>& out);
  void group_outputs();
};

}  // namespace npukit::sim
