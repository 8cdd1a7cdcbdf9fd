// Integer evaluation of Halide Exprs from the lowered nest: loop extents, allocation sizes
// and addresses become numbers for one shape. An Expr is compiled once into a slot program
// (`IntProgram`) and run over a frame of values by slot, because the walk evaluates the
// same bounds and lets at thousands of iterations and a name hashed per use dominated it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "Halide.h"

namespace npukit::sim {

// Values of names: what an analysis is given (shapes, tiles, buffer fields).
using Bindings = std::unordered_map<std::string, int64_t>;

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

// An integer or boolean Expr compiled for evaluation many times over a SlotFrame, with no
// hashing or allocation per run. Its value is nullopt when it reads an unknown slot or
// something it cannot evaluate (a load, a call, a float); division and modulo round as
// Halide does (toward −∞; x / 0 = 0); arithmetic wraps (two's complement).
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
  struct Value {
    int64_t v;
    bool known;
  };
  struct Saved {  // a slot's binding under a let
    int64_t v;
    char known;
    bool value_known;  // the let's value: unknown makes the whole let unknown
  };
  std::optional<int64_t> run(SlotFrame& frame, Value* stack, Saved* saved) const;
  // Stacks this deep live on the machine stack; a deeper program (none of the shipped
  // schedules' is) runs on heap ones.
  static constexpr size_t kMaxStack = 64, kMaxLets = 16;
  std::vector<Instr> code_;
  size_t max_stack_ = 0, max_lets_ = 0;
  friend class IntCompiler;
};

}  // namespace npukit::sim
