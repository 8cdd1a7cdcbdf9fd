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

}  // namespace npukit::sim
