#include "ops/prefetch.h"

#include "halide_prefetch_l1_bitcode.h"
#include "halide_prefetch_l2_bitcode.h"
#include "ops/linked_bitcode.h"

namespace npukit::ops {

using namespace Halide;
using namespace Halide::Internal;

void add_prefetch_bitcode(GeneratorContext::ExternsMap& generator_externs, const Target& t, PrefetchLevel level) {
  if (t.arch != Target::X86 || t.bits != 64) return;
  const bool l1 = level == PrefetchLevel::l1;
  link_bitcode(generator_externs, t, "npukit.halide_prefetch.v2",
               l1 ? npukit_prefetch_l1_bitcode : npukit_prefetch_l2_bitcode,
               l1 ? npukit_prefetch_l1_bitcode_len : npukit_prefetch_l2_bitcode_len);
}

namespace {

// Halide's name for the loop over a prefetch's 64-byte pieces of `buffer`.
std::string split_loop_name(const std::string& buffer) { return "prefetch_split_" + buffer + ".0"; }

}  // namespace

Stmt PrefetchLineSteps::visit(const For* op) {
  const std::string outer = split_loop_;
  if (op->name.rfind("prefetch_split_", 0) == 0) split_loop_ = op->name;
  Stmt s = IRMutator::visit(op);
  split_loop_ = outer;
  return s;
}

Stmt PrefetchLineSteps::visit(const Evaluate* op) {
  const Call* call = Call::as_intrinsic(op->value, {Call::prefetch});
  if (!call || call->args.size() != 4) return IRMutator::visit(op);
  const Variable* buffer = call->args[0].as<Variable>();
  if (!buffer || split_loop_ != split_loop_name(buffer->name)) return IRMutator::visit(op);
  const int bytes = call->type.bytes();
  if (bytes == 1) return op;
  // The offset as Halide writes it: at0 + i · step, step an expression without i (64, the
  // dimension's stride in bytes where that is wider than a line, or a select on the
  // stride's sign), a multiple of the element size. An offset that does not name i (a let
  // in between) or is not of that form is left alone.
  const Expr i = Variable::make(Int(32), split_loop_);
  const Expr& offset = call->args[1];
  const Expr step = simplify(substitute(split_loop_, i + 1, offset) - offset);
  const int64_t* constant = as_const_int(step);
  if (expr_uses_var(step, split_loop_) || is_const_zero(step) || (constant && *constant % bytes != 0)) {
    ++not_linear;
    return op;
  }
  ++restepped;
  const Expr at0 = simplify(substitute(split_loop_, 0, offset));
  const Expr lines = at0 + i * simplify(step / bytes);
  return Evaluate::make(Call::make(call->type, Call::prefetch, {call->args[0], lines, call->args[2], call->args[3]},
                                   Call::Intrinsic));
}

void add_prefetch_line_steps(Pipeline pipeline) { pipeline.add_custom_lowering_pass(new PrefetchLineSteps()); }

}  // namespace npukit::ops
