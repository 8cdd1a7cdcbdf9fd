#include "runtime/scratch_arena.h"

#include <algorithm>
#include <cstdint>

#include "runtime/op_spec.h"

namespace npukit {
namespace {

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

std::byte* aligned(std::byte* p, size_t a) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<std::byte*>((v + a - 1) / a * a);
}

}  // namespace

void* ScratchArena::take(size_t bytes) {
  const size_t at = round_up(used_, kAlign);
  used_ = at + bytes;
  high_ = std::max(high_, used_);
  if (used_ <= capacity_) return block_ + at;
  // Beyond the block: memory of its own until the outermost release.
  overflow_.push_back(std::make_unique<std::byte[]>(bytes + kAlign));
  return aligned(overflow_.back().get(), kAlign);
}

void ScratchArena::release(size_t mark) {
  used_ = mark;
  if (mark != 0 || overflow_.empty()) return;
  overflow_.clear();
  capacity_ = round_up(high_, kAlign);
  storage_ = std::make_unique<std::byte[]>(capacity_ + kAlign);
  block_ = aligned(storage_.get(), kAlign);
}

ScratchFrame::ScratchFrame(const Call& call)
    : own_(call.arena.p ? nullptr : std::make_unique<ScratchArena>()),
      arena_(call.arena.p ? *call.arena.p : *own_),
      mark_(arena_.mark()) {}

}  // namespace npukit
