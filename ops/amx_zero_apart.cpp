#include "ops/amx_zero_apart.h"

namespace npukit::ops {

using namespace Halide;
using namespace Halide::Internal;

namespace {

constexpr int kRowBytes = 64;  // one AMX tile row
const char* const kZeros = "amx_zero_rows";

}  // namespace

Stmt AmxZeroApart::mutate(const Stmt& s) {
  if (depth_ > 0) return IRMutator::mutate(s);
  // The whole pipeline: its accumulators' zeroings, then the buffer around it if any used it.
  ++depth_;
  Stmt body = IRMutator::mutate(s);
  --depth_;
  if (replaced_zeroings == 0) return body;
  const int words = kRowsOfZeros * kRowBytes / 4;
  const Stmt zero = Store::make(kZeros, make_zero(Int(32, words)), Ramp::make(0, 1, words), Parameter(),
                                const_true(words), ModulusRemainder());
  return Allocate::make(kZeros, Int(32), MemoryType::Stack, {words}, const_true(), Block::make(zero, body));
}

Stmt AmxZeroApart::visit(const Store* op) {
  const Call* zero = op->value.as<Call>();
  if (!zero || zero->name != "tile_zero" || zero->args.size() != 2) return IRMutator::visit(op);
  // tile_zero(rows, bytes per row) -> tile_load(rows, bytes per row, buffer, byte offset,
  // stride), as bytes (Halide 14's only integer tile_load), reinterpreted.
  auto [it, added] = row_of_.emplace(op->name, static_cast<int>(row_of_.size()) % kRowsOfZeros);
  const Expr offset = it->second * kRowBytes;
  const Type bytes = Int(8, zero->type.bytes() * zero->type.lanes());
  const Expr load =
      reinterpret(zero->type, Call::make(bytes, "tile_load",
                                         {zero->args[0], zero->args[1], Variable::make(Handle(), kZeros), offset, 0},
                                         Call::Intrinsic));
  ++replaced_zeroings;
  return Store::make(op->name, load, op->index, op->param, op->predicate, op->alignment);
}

}  // namespace npukit::ops
