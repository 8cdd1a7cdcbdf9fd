// An output buffer with guard zones, to catch kernels that write outside their tensor
// (llama.cpp guards every output the same way). Layout: [guard | payload | guard].
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

namespace npukit::golden {

class GuardedBuffer {
 public:
  static constexpr size_t kGuardBytes = 4096;  // each side: a page, beyond any vector width
  static constexpr size_t kAlignment = 64;     // payload alignment: a cache line / AVX-512

  // The payload starts as `fill` bytes. 0xFF makes every float16/float32 element a NaN,
  // so an element the kernel never writes shows up as a NaN/Inf mismatch.
  explicit GuardedBuffer(size_t bytes, uint8_t fill = 0xFF);

  // A moved-from buffer is empty: data() is null, bytes() is 0, intact() is true.
  GuardedBuffer(GuardedBuffer&& o) noexcept
      : base_(std::move(o.base_)), bytes_(std::exchange(o.bytes_, 0)) {}
  GuardedBuffer& operator=(GuardedBuffer&& o) noexcept {
    base_ = std::move(o.base_);
    bytes_ = std::exchange(o.bytes_, 0);
    return *this;
  }
  GuardedBuffer(const GuardedBuffer&) = delete;
  GuardedBuffer& operator=(const GuardedBuffer&) = delete;

  void* data() { return base_ ? base_.get() + kGuardBytes : nullptr; }
  const void* data() const { return base_ ? base_.get() + kGuardBytes : nullptr; }
  size_t bytes() const { return bytes_; }

  bool intact() const;
  // "" when intact; otherwise one clause per damaged side, e.g.
  // "guard after payload: 3 corrupt bytes, first at payload offset +4096". "First" walks
  // outward from the payload, so an off-by-one write before it reads "offset -1".
  std::string corruption_report() const;

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], Free> base_;
  size_t bytes_ = 0;
};

}  // namespace npukit::golden
