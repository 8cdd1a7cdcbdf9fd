// The decode plan as a table or as JSON (docs/decode.md lists the keys).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "tools/decode/plan.h"

namespace npukit::decode {

std::string format_plan(const Plan& p);
nlohmann::json plan_json(const Plan& p);

}  // namespace npukit::decode
