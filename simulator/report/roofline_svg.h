// The roofline of one simulation as a standalone SVG: log-log axes (arithmetic intensity
// in ops per DRAM byte against ops per second), a compute roof per matrix dtype and per
// vector dtype the op uses, the DRAM bandwidth roof, and the op's achieved point.
#pragma once

#include <string>

#include "simulator/simulate.h"

namespace npukit::sim {

std::string roofline_svg(const SimResult& result);
// Throws std::runtime_error naming `path` when it cannot be written.
void write_roofline_svg(const SimResult& result, const std::string& path);

}  // namespace npukit::sim
