#include "golden/guard.h"

#include <cstring>
#include <new>

namespace npukit::golden {
namespace {

// A varying pattern: a kernel that stores a constant, or copies a neighbouring guard
// shifted by a few bytes, still differs from it.
uint8_t guard_byte(size_t i) { return static_cast<uint8_t>(0xA5 ^ (i * 0x3B)); }

struct SideDamage {
  size_t count = 0;
  size_t nearest = 0;  // distance from the payload edge of the first damaged byte, 0-based
};

// step = +1 walks the trailing guard away from the payload, -1 the leading one.
SideDamage scan(const uint8_t* edge, int step) {
  SideDamage d;
  for (size_t k = 0; k < GuardedBuffer::kGuardBytes; ++k) {
    const uint8_t* p = step > 0 ? edge + k : edge - 1 - k;
    const size_t pattern_index = step > 0 ? k : GuardedBuffer::kGuardBytes - 1 - k;
    if (*p != guard_byte(pattern_index)) {
      if (d.count++ == 0) d.nearest = k;
    }
  }
  return d;
}

}  // namespace

void GuardedBuffer::Free::operator()(uint8_t* p) const {
  ::operator delete[](p, std::align_val_t{kAlignment});
}

GuardedBuffer::GuardedBuffer(size_t bytes, uint8_t fill) : bytes_(bytes) {
  const size_t total = kGuardBytes + bytes + kGuardBytes;
  base_.reset(static_cast<uint8_t*>(::operator new[](total, std::align_val_t{kAlignment})));
  uint8_t* p = base_.get();
  for (size_t i = 0; i < kGuardBytes; ++i) {
    p[i] = guard_byte(i);
    p[kGuardBytes + bytes + i] = guard_byte(i);
  }
  std::memset(p + kGuardBytes, fill, bytes);
}

bool GuardedBuffer::intact() const {
  if (!base_) return true;  // moved from
  const auto* payload = static_cast<const uint8_t*>(data());
  return scan(payload, -1).count == 0 && scan(payload + bytes_, +1).count == 0;
}

std::string GuardedBuffer::corruption_report() const {
  if (!base_) return "";
  const auto* payload = static_cast<const uint8_t*>(data());
  const SideDamage before = scan(payload, -1);
  const SideDamage after = scan(payload + bytes_, +1);
  std::string report;
  if (before.count) {
    report += "guard before payload: " + std::to_string(before.count) +
              " corrupt bytes, first at payload offset -" + std::to_string(before.nearest + 1);
  }
  if (after.count) {
    if (!report.empty()) report += "; ";
    report += "guard after payload: " + std::to_string(after.count) +
              " corrupt bytes, first at payload offset +" +
              std::to_string(bytes_ + after.nearest);
  }
  return report;
}

}  // namespace npukit::golden
