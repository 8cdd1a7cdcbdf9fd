#include "schedules/npu/footprint.h"

#include <algorithm>

namespace npukit::schedules::npu {

int64_t aligned_bytes(const sim::ArchSpec& arch, const std::string& buffer, int64_t bytes, bool double_buffered) {
  const sim::Buffer* b = arch.find_buffer(buffer);
  const int64_t align = b ? std::max<int64_t>(1, b->alignment) : 1;
  return (bytes + align - 1) / align * align * (double_buffered ? 2 : 1);
}

}  // namespace npukit::schedules::npu
