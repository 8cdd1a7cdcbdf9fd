// Bytes an allocation takes in an arch buffer, counted as the capacity rule counts them
// (simulator/rules: each allocation rounded up to its buffer's alignment). The choosers of
// the schedules in this folder size their tiles with it. To be replaced by
// sim::buffer_footprint, the rules' own function, when the registration lands.
#pragma once

#include <cstdint>
#include <string>

#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

// `bytes` rounded up to `buffer`'s alignment (1 when `arch` has no such buffer), times
// two when double-buffered.
int64_t aligned_bytes(const sim::ArchSpec& arch, const std::string& buffer, int64_t bytes, bool double_buffered = false);

}  // namespace npukit::schedules::npu
