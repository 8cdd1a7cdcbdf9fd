// Cold-data arenas for benchmarks: N slots rotated so that the working set (all slots)
// is several times the last-level cache, and each kernel call reads from DRAM.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>

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
        slots_(std::max(min_slots, (kColdBytes + stride_ - 1) / stride_)) {
    bytes_ = (stride_ * slots_ + (size_t(2) << 20) - 1) / (size_t(2) << 20) * (size_t(2) << 20);
    data_ = static_cast<uint8_t*>(std::aligned_alloc(size_t(2) << 20, bytes_));
    madvise(data_, bytes_, MADV_HUGEPAGE);
    std::memset(data_, 0, bytes_);  // fault every page in before timing
  }
  ~ColdArena() { std::free(data_); }
  ColdArena(const ColdArena&) = delete;
  ColdArena& operator=(const ColdArena&) = delete;

  size_t slots() const { return slots_; }
  void* slot(size_t i) { return data_ + (i % slots_) * stride_; }

 private:
  size_t stride_, slots_, bytes_ = 0;
  uint8_t* data_ = nullptr;
};

}  // namespace npukit::bench
