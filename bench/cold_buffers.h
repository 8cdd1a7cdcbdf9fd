// Cold-data arenas for benchmarks: N slots rotated so that the working set (all slots)
// is several times the last-level cache, and each kernel call reads from DRAM.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>

namespace npukit::bench {

// 256 MiB across all slots: 8x the 32 MiB L3 of the machines we measure on.
inline constexpr size_t kColdBytes = size_t(256) << 20;

class ColdArena {
 public:
  // At least `min_slots` slots of `slot_bytes`, and enough to cover kColdBytes. Pages are
  // 2 MiB-aligned and advised as huge pages, like the kernels' anchor below: both sides
  // of every ratio see the same TLB behaviour.
  ColdArena(size_t slot_bytes, size_t min_slots = 2)
      : stride_((slot_bytes + 4095) / 4096 * 4096),
        slots_(std::max(min_slots, (kColdBytes + stride_ - 1) / stride_)),
        step_(step_for(stride_, slots_)) {
    bytes_ = (stride_ * slots_ + (size_t(2) << 20) - 1) / (size_t(2) << 20) * (size_t(2) << 20);
    data_ = static_cast<uint8_t*>(std::aligned_alloc(size_t(2) << 20, bytes_));
    madvise(data_, bytes_, MADV_HUGEPAGE);
    std::memset(data_, 0, bytes_);  // fault every page in before timing
  }
  ~ColdArena() { std::free(data_); }
  ColdArena(const ColdArena&) = delete;
  ColdArena& operator=(const ColdArena&) = delete;

  size_t slots() const { return slots_; }
  // Consecutive slots lie more than a huge page apart: when slot i + 1 followed slot i in
  // memory, the hardware prefetcher streaming through one call's slot ran on into the next
  // call's, and a loop of small copies measured warm (fp16 [1, 4096] on Zen 4: 0.45 us per
  // copy over adjacent slots, 1.2 us over distant ones).
  void* slot(size_t i) { return data_ + (i * step_ % slots_) * stride_; }

 private:
  // The smallest step past 2 MiB that is coprime with the slot count, so that i * step
  // visits every slot.
  static size_t step_for(size_t stride, size_t slots) {
    size_t step = ((size_t(2) << 20) + stride - 1) / stride + 1;
    while (std::gcd(step, slots) != 1) ++step;
    return step;
  }

  size_t stride_, slots_, step_, bytes_ = 0;
  uint8_t* data_ = nullptr;
};

}  // namespace npukit::bench
