// The one count of how much of an on-chip buffer an allocation takes. The capacity rule
// and every tile chooser count through these functions, so a chooser can never pick tiles
// that the rule then rejects.
#pragma once

#include <algorithm>
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

// Tiles of whole rows, for a schedule that brings `rows` rows into a buffer a tile at a
// time: the most rows per tile whose allocations fit, double-buffered where two copies of
// the input do, but at most ceil(rows / cores) so that every core has a tile (128 rows on
// 24 cores in tiles of 24 would idle 19 cores). {1, false} where not even one row fits: the
// capacity rule then says by how much. `allocations(r, double_buffer)` is the schedule's
// std::vector<PlannedAllocation> for a tile of r rows, the list the capacity rule counts.
struct RowTiles {
  int64_t rows = 1;
  bool double_buffer = false;
};

template <class Allocations>
RowTiles choose_row_tiles(const ArchSpec& arch, int64_t rows, Allocations allocations) {
  for (bool db : {true, false}) {
    auto fits = [&](int64_t r) { return fits_buffers(arch, allocations(r, db)); };
    if (!fits(1)) continue;
    const int64_t per_core = (rows + arch.cores - 1) / arch.cores;
    return RowTiles{std::min(most_that_fit(1, rows, fits), per_core), db};
  }
  return RowTiles{1, false};
}

}  // namespace npukit::sim
