// Memory for a kernel call's intermediates (a projection's output, an int32 accumulator, a
// row of ones). A prepared op keeps one arena per concurrent run (PreparedOp::Scratch), so a
// steady loop of runs allocates nothing once the arena has grown to the largest call; a
// plain call (npukit_run, bind_call + run_call) gets a fresh one per frame.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

namespace npukit {

struct Call;

class ScratchArena {
 public:
  // `bytes` of uninitialised memory, 64-byte aligned, valid until release() below its mark.
  void* take(size_t bytes);
  size_t mark() const { return used_; }
  // Back to `mark`. At 0, memory that overflowed the block (a call larger than any before)
  // is folded into one block of the largest size seen, so the next such call fits.
  void release(size_t mark);

 private:
  static constexpr size_t kAlign = 64;
  std::unique_ptr<std::byte[]> storage_;
  std::byte* block_ = nullptr;  // storage_, aligned
  size_t capacity_ = 0, used_ = 0, high_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> overflow_;
};

// A call's scratch for the duration of one op's run: what take() returns is released when
// the frame ends. Uses the Call's arena (a prepared op's), else one of its own.
class ScratchFrame {
 public:
  explicit ScratchFrame(const Call& call);
  ~ScratchFrame() { arena_.release(mark_); }
  ScratchFrame(const ScratchFrame&) = delete;
  ScratchFrame& operator=(const ScratchFrame&) = delete;

  template <class T>
  T* take(size_t count) {
    return static_cast<T*>(arena_.take(count * sizeof(T)));
  }
  // count copies of v.
  template <class T>
  T* fill(size_t count, T v) {
    T* p = take<T>(count);
    for (size_t i = 0; i < count; ++i) p[i] = v;
    return p;
  }

 private:
  std::unique_ptr<ScratchArena> own_;
  ScratchArena& arena_;
  size_t mark_;
};

}  // namespace npukit
