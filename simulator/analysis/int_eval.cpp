#include "simulator/analysis/int_eval.h"

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

// Each visit leaves the result in `value_` (nullopt: unknown).
class Evaluator : public IRVisitor {
 public:
  explicit Evaluator(const Bindings& env) : env_(env) {}
  std::optional<int64_t> run(const Expr& e) {
    value_.reset();
    if (e.defined()) e.accept(this);
    return value_;
  }

 private:
  using IRVisitor::visit;
  const Bindings& env_;
  std::unordered_map<std::string, int64_t> lets_;
  std::optional<int64_t> value_;

  template <class Op, class F>
  void binary(const Op* op, F f) {
    auto a = run(op->a);
    auto b = run(op->b);
    value_ = (a && b) ? std::optional<int64_t>(f(*a, *b)) : std::nullopt;
  }

  void visit(const IntImm* op) override { value_ = op->value; }
  void visit(const UIntImm* op) override { value_ = static_cast<int64_t>(op->value); }
  void visit(const Variable* op) override {
    if (auto it = lets_.find(op->name); it != lets_.end()) {
      value_ = it->second;
    } else if (auto e = env_.find(op->name); e != env_.end()) {
      value_ = e->second;
    } else {
      value_.reset();
    }
  }
  void visit(const Cast* op) override {
    value_ = op->type.is_int_or_uint() || op->type.is_bool() ? run(op->value) : std::nullopt;
  }
  void visit(const Add* op) override { binary(op, [](int64_t a, int64_t b) { return a + b; }); }
  void visit(const Sub* op) override { binary(op, [](int64_t a, int64_t b) { return a - b; }); }
  void visit(const Mul* op) override { binary(op, [](int64_t a, int64_t b) { return a * b; }); }
  void visit(const Div* op) override { binary(op, floor_div); }
  void visit(const Mod* op) override { binary(op, floor_mod); }
  void visit(const Min* op) override { binary(op, [](int64_t a, int64_t b) { return std::min(a, b); }); }
  void visit(const Max* op) override { binary(op, [](int64_t a, int64_t b) { return std::max(a, b); }); }
  void visit(const EQ* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a == b); }); }
  void visit(const NE* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a != b); }); }
  void visit(const LT* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a < b); }); }
  void visit(const LE* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a <= b); }); }
  void visit(const GT* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a > b); }); }
  void visit(const GE* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a >= b); }); }
  void visit(const And* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a && b); }); }
  void visit(const Or* op) override { binary(op, [](int64_t a, int64_t b) { return int64_t(a || b); }); }
  void visit(const Not* op) override {
    auto a = run(op->a);
    value_ = a ? std::optional<int64_t>(!*a) : std::nullopt;
  }
  void visit(const Select* op) override {
    auto c = run(op->condition);
    value_ = c ? run(*c ? op->true_value : op->false_value) : std::nullopt;
  }
  void visit(const Let* op) override {
    auto v = run(op->value);
    if (!v) {
      value_.reset();
      return;
    }
    auto saved = lets_.find(op->name) == lets_.end() ? std::nullopt : std::optional<int64_t>(lets_[op->name]);
    lets_[op->name] = *v;
    value_ = run(op->body);
    if (saved) {
      lets_[op->name] = *saved;
    } else {
      lets_.erase(op->name);
    }
  }
  void visit(const Call* op) override {
    // likely() and friends wrap conditions in the lowered nest.
    if ((op->is_intrinsic(Call::likely) || op->is_intrinsic(Call::likely_if_innermost) ||
         op->is_intrinsic(Call::promise_clamped) || op->is_intrinsic(Call::unsafe_promise_clamped)) &&
        !op->args.empty()) {
      value_ = run(op->args[0]);
    } else {
      value_.reset();
    }
  }
  // Anything else (loads, floats, vectors) is unknown.
  void visit(const Load*) override { value_.reset(); }
  void visit(const Ramp*) override { value_.reset(); }
  void visit(const Broadcast* op) override { value_ = run(op->value); }
  void visit(const FloatImm*) override { value_.reset(); }
  void visit(const StringImm*) override { value_.reset(); }
  void visit(const Shuffle*) override { value_.reset(); }
  void visit(const VectorReduce*) override { value_.reset(); }
};

}  // namespace

std::optional<int64_t> eval_int(const Expr& e, const Bindings& env) { return Evaluator(env).run(e); }

}  // namespace npukit::sim
