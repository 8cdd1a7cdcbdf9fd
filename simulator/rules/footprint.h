// The one count of how much of an on-chip buffer an allocation takes. The capacity rule
// and every tile chooser count through these functions, so a chooser can never pick tiles
// that the rule then rejects.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "simulator/arch/arch_spec.h"

namespace npukit::sim {

// What one allocation of `bytes` occupies in `b`: each copy starts on the buffer's
// alignment, so it is rounded up to it; two copies when double-buffered. Saturates
// instead of overflowing (a huge alignment or size simply does not fit).
int64_t buffer_footprint(const Buffer& b, int64_t bytes, bool double_buffered);

// An allocation a schedule will make, before any nest exists (for tile choosers).
struct PlannedAllocation {
  std::string buffer;
  int64_t bytes = 0;
  bool double_buffered = false;
};

// Whether every buffer holds its planned allocations together (all taken as live at once,
// as the capacity rule takes them). A buffer the arch lacks never fits.
bool fits_buffers(const ArchSpec& arch, const std::vector<PlannedAllocation>& planned);

// The largest n in [lo, hi] for which fits(n), where fits(lo) holds and fits is monotone
// (a larger tile never fits where a smaller one does not): the tile choosers' search.
template <class Fits>
int64_t most_that_fit(int64_t lo, int64_t hi, Fits fits) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    if (fits(mid)) {
      lo = mid;
    } else {
      hi = mid - 1;
    }
  }
  return lo;
}

}  // namespace npukit::sim
