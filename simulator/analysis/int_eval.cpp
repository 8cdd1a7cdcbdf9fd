#include "simulator/analysis/int_eval.h"

#include <algorithm>

namespace npukit::sim {

using namespace Halide;
using namespace Halide::Internal;

namespace {

int64_t floor_div(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b, r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) --q;
  return q;
}

int64_t floor_mod(int64_t a, int64_t b) { return b == 0 ? 0 : a - floor_div(a, b) * b; }

}  // namespace

int64_t pow2_dividing(int64_t x) {
  if (x == 0) return 4096;
  int64_t p = 1;
  while (p < 4096 && x % (p * 2) == 0) p *= 2;
  return p;
}

int SlotFrame::slot(const std::string& name) {
  auto [it, fresh] = slots.try_emplace(name, static_cast<int>(values.size()));
  if (fresh) {
    values.push_back(0);
    known.push_back(0);
  }
  return it->second;
}

// Emits an Expr in postfix; what it cannot evaluate (loads, calls other than likely() and
// friends, floats, vectors but broadcasts) becomes Code::unknown.
class IntCompiler : public IRVisitor {
 public:
  using Code = IntProgram::Code;
  IntCompiler(IntProgram& p, SlotFrame& f) : p_(p), f_(f) {}

  void emit(Code c, int slot = 0, int64_t value = 0, int pops = 0) {
    p_.code_.push_back({c, slot, value});
    depth_ = depth_ - pops + 1;
    p_.max_stack_ = std::max(p_.max_stack_, depth_);
  }

 private:
  using IRVisitor::visit;
  IntProgram& p_;
  SlotFrame& f_;
  size_t depth_ = 0, lets_ = 0;

  template <class Op>
  void binary(const Op* op, Code c) {
    op->a.accept(this);
    op->b.accept(this);
    emit(c, 0, 0, 2);
  }
  void unknown() { emit(Code::unknown); }

  void visit(const IntImm* op) override { emit(Code::constant, 0, op->value); }
  void visit(const UIntImm* op) override { emit(Code::constant, 0, static_cast<int64_t>(op->value)); }
  void visit(const Variable* op) override { emit(Code::load, f_.slot(op->name)); }
  void visit(const Cast* op) override {
    if (op->type.is_int_or_uint() || op->type.is_bool()) {
      op->value.accept(this);
    } else {
      unknown();
    }
  }
  void visit(const Add* op) override { binary(op, Code::add); }
  void visit(const Sub* op) override { binary(op, Code::sub); }
  void visit(const Mul* op) override { binary(op, Code::mul); }
  void visit(const Div* op) override { binary(op, Code::div); }
  void visit(const Mod* op) override { binary(op, Code::mod); }
  void visit(const Min* op) override { binary(op, Code::min); }
  void visit(const Max* op) override { binary(op, Code::max); }
  void visit(const EQ* op) override { binary(op, Code::eq); }
  void visit(const NE* op) override { binary(op, Code::ne); }
  void visit(const LT* op) override { binary(op, Code::lt); }
  void visit(const LE* op) override { binary(op, Code::le); }
  void visit(const GT* op) override { binary(op, Code::gt); }
  void visit(const GE* op) override { binary(op, Code::ge); }
  void visit(const And* op) override { binary(op, Code::logical_and); }
  void visit(const Or* op) override { binary(op, Code::logical_or); }
  void visit(const Not* op) override {
    op->a.accept(this);
    emit(Code::logical_not, 0, 0, 1);
  }
  void visit(const Select* op) override {
    op->condition.accept(this);
    op->true_value.accept(this);
    op->false_value.accept(this);
    emit(Code::select, 0, 0, 3);
  }
  void visit(const Let* op) override {
    const int slot = f_.slot(op->name);
    op->value.accept(this);
    emit(Code::let_begin, slot, 0, 1);
    --depth_;  // let_begin consumes the value and pushes nothing
    p_.max_lets_ = std::max(p_.max_lets_, ++lets_);
    op->body.accept(this);
    --lets_;
    emit(Code::let_end, slot, 0, 1);
  }
  void visit(const Call* op) override {
    // likely() and friends wrap conditions in the lowered nest.
    if ((op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
         op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped)) &&
        !op->args.empty()) {
      op->args[0].accept(this);
    } else {
      unknown();
    }
  }
  void visit(const Load*) override { unknown(); }
  void visit(const Ramp*) override { unknown(); }
  void visit(const Broadcast* op) override { op->value.accept(this); }
  void visit(const FloatImm*) override { unknown(); }
  void visit(const StringImm*) override { unknown(); }
  void visit(const Shuffle*) override { unknown(); }
  void visit(const VectorReduce*) override { unknown(); }
};

IntProgram::IntProgram(const Expr& e, SlotFrame& frame) {
  IntCompiler c(*this, frame);
  if (e.defined()) {
    e.accept(&c);
  } else {
    c.emit(Code::unknown);
  }
}

std::vector<int> IntProgram::reads() const {
  std::vector<int> out;
  for (const Instr& in : code_)
    if (in.code == Code::load) out.push_back(in.slot);
  return out;
}

bool IntProgram::always_unknown() const {
  std::vector<char> unknown;  // per stack entry: unknown whatever the slots hold
  std::vector<char> let_unknown;
  for (const Instr& in : code_) {
    switch (in.code) {
      case Code::constant:
      case Code::load: unknown.push_back(0); break;
      case Code::unknown: unknown.push_back(1); break;
      case Code::logical_not: break;
      case Code::select: {
        const char f = unknown.back();
        unknown.pop_back();
        const char t = unknown.back();
        unknown.pop_back();
        unknown.back() = unknown.back() || (t && f);
        break;
      }
      case Code::let_begin:
        let_unknown.push_back(unknown.back());
        unknown.pop_back();
        break;
      case Code::let_end:
        unknown.back() = unknown.back() || let_unknown.back();
        let_unknown.pop_back();
        break;
      default: {
        const char b = unknown.back();
        unknown.pop_back();
        unknown.back() = unknown.back() || b;
      }
    }
  }
  return unknown.empty() || unknown[0];
}

std::optional<int64_t> IntProgram::run(SlotFrame& frame) const {
  if (max_stack_ <= kMaxStack && max_lets_ <= kMaxLets) {
    Value stack[kMaxStack];
    Saved saved[kMaxLets];
    return run(frame, stack, saved);
  }
  std::vector<Value> stack(max_stack_);
  std::vector<Saved> saved(max_lets_);
  return run(frame, stack.data(), saved.data());
}

std::optional<int64_t> IntProgram::run(SlotFrame& frame, Value* stack, Saved* saved) const {
  size_t sp = 0, lp = 0;
  auto wrap = [](uint64_t x) { return static_cast<int64_t>(x); };  // two's complement, as the hardware
  for (const Instr& in : code_) {
    switch (in.code) {
      case Code::constant: stack[sp++] = {in.value, true}; break;
      case Code::load: stack[sp++] = {frame.values[in.slot], frame.known[in.slot] != 0}; break;
      case Code::unknown: stack[sp++] = {0, false}; break;
      case Code::logical_not: stack[sp - 1].v = !stack[sp - 1].v; break;
      case Code::select: {
        const Value f = stack[--sp], t = stack[--sp], c = stack[sp - 1];
        stack[sp - 1] = !c.known ? Value{0, false} : c.v ? t : f;
        break;
      }
      case Code::let_begin: {
        const Value v = stack[--sp];
        saved[lp++] = {frame.values[in.slot], frame.known[in.slot], v.known};
        frame.values[in.slot] = v.v;
        frame.known[in.slot] = v.known;
        break;
      }
      case Code::let_end: {
        const Saved s = saved[--lp];
        frame.values[in.slot] = s.v;
        frame.known[in.slot] = s.known;
        if (!s.value_known) stack[sp - 1].known = false;
        break;
      }
      default: {
        const Value b = stack[--sp], a = stack[sp - 1];
        int64_t r = 0;
        switch (in.code) {
          case Code::add: r = wrap(uint64_t(a.v) + uint64_t(b.v)); break;
          case Code::sub: r = wrap(uint64_t(a.v) - uint64_t(b.v)); break;
          case Code::mul: r = wrap(uint64_t(a.v) * uint64_t(b.v)); break;
          case Code::div: r = floor_div(a.v, b.v); break;
          case Code::mod: r = floor_mod(a.v, b.v); break;
          case Code::min: r = std::min(a.v, b.v); break;
          case Code::max: r = std::max(a.v, b.v); break;
          case Code::eq: r = a.v == b.v; break;
          case Code::ne: r = a.v != b.v; break;
          case Code::lt: r = a.v < b.v; break;
          case Code::le: r = a.v <= b.v; break;
          case Code::gt: r = a.v > b.v; break;
          case Code::ge: r = a.v >= b.v; break;
          case Code::logical_and: r = a.v && b.v; break;
          case Code::logical_or: r = a.v || b.v; break;
          default: break;
        }
        stack[sp - 1] = {r, a.known && b.known};
      }
    }
  }
  return stack[0].known ? std::optional<int64_t>(stack[0].v) : std::nullopt;
}

}  // namespace npukit::sim
