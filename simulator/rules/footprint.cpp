#include "simulator/rules/footprint.h"

#include <algorithm>
#include <limits>
#include <map>

namespace npukit::sim {

namespace {
constexpr int64_t kHuge = std::numeric_limits<int64_t>::max() / 4;  // beyond any buffer; sums stay finite
}

int64_t buffer_footprint(const Buffer& b, int64_t bytes, bool double_buffered) {
  if (bytes <= 0) return 0;
  const int64_t align = std::max<int64_t>(1, b.alignment);
  const int64_t units = bytes / align + (bytes % align != 0);
  if (units > kHuge / align / 2) return kHuge;
  return units * align * (double_buffered ? 2 : 1);
}

bool fits_buffers(const ArchSpec& arch, const std::vector<PlannedAllocation>& planned) {
  std::map<std::string, int64_t> used;
  for (const PlannedAllocation& p : planned) {
    const Buffer* b = arch.find_buffer(p.buffer);
    if (!b) return false;
    used[p.buffer] = std::min(kHuge, used[p.buffer] + buffer_footprint(*b, p.bytes, p.double_buffered));
  }
  for (const auto& [name, bytes] : used) {
    if (bytes > arch.find_buffer(name)->bytes) return false;
  }
  return true;
}

}  // namespace npukit::sim
