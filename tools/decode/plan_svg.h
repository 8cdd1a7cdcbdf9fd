// The decode plan as an SVG (npukit decode --svg): the decode step's time per op as one
// stacked bar, and the memory plan as a stacked bar against the DRAM capacity.
#pragma once

#include <string>

#include "tools/decode/plan.h"

namespace npukit::decode {

std::string plan_svg(const Plan& p);
// std::runtime_error naming the path when it cannot be written.
void write_plan_svg(const Plan& p, const std::string& path);

}  // namespace npukit::decode
