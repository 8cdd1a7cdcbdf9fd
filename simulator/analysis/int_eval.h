// Integer evaluation of Halide Exprs from the lowered nest under a binding of names to
// values: loop extents, allocation sizes and addresses become numbers for one shape.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <optional>
#include <string>
#include <vector>

#include "Halide.h"

namespace npukit::sim {

using Bindings = std::unordered_map<std::string, int64_t>;

// The value of `e` (an integer or boolean expression) under `env`, or nullopt when it
// uses a name `env` lacks or an operation it cannot evaluate (a load, a call).
// Division and modulo round as Halide does (toward −∞; x / 0 = 0).
std::optional<int64_t> eval_int(const Halide::Expr& e, const Bindings& env);

// An address's alignment as the analysis counts it: the largest power of two dividing x,
// at most 4096 (tensors are assumed 4 KiB-aligned; 0 is aligned).
int64_t pow2_dividing(int64_t x);

// Values by slot for IntProgram: names resolved to indices once, not hashed per use.
struct SlotFrame {
  std::unordered_map<std::string, int> slots;  // name → index into values/known
  std::vector<int64_t> values;
  std::vector<char> known;
  int slot(const std::string& name);  // the name's slot, added unknown if new
  void set(int slot, std::optional<int64_t> v) {
    known[slot] = v.has_value();
    values[slot] = v.value_or(0);
  }
};

// An Expr compiled for evaluation many times over a SlotFrame, with eval_int's
// semantics (an unknown name, load or call gives nullopt) and no hashing or allocation
// per run: a loop's key is evaluated at each of its thousands of iterations (iteration_key.h).
class IntProgram {
 public:
  IntProgram(const Halide::Expr& e, SlotFrame& frame);
  std::optional<int64_t> run(SlotFrame& frame) const;
  // The slots it loads (a name bound inside it included).
  std::vector<int> reads() const;
  // Whether it gives nullopt whatever the slots hold (a vector index: a ramp).
  bool always_unknown() const;

 private:
  enum class Code : uint8_t {
    constant, load, unknown, add, sub, mul, div, mod, min, max, eq, ne, lt, le, gt, ge, logical_and,
    logical_or, logical_not, select, let_begin, let_end
  };
  struct Instr {
    Code code;
    int slot = 0;       // load, let_begin, let_end
    int64_t value = 0;  // constant
  };
  static constexpr size_t kMaxStack = 64, kMaxLets = 16;  // far beyond a lowered bound's depth
  std::vector<Instr> code_;
  size_t max_stack_ = 0;
  friend class IntCompiler;
};

}  // namespace npukit::sim
