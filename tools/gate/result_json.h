// CaseResult ⇄ JSON: the --json report and the pipe from isolated gate children.
#pragma once

#include <nlohmann/json.hpp>

#include "tools/gate/gate.h"

namespace npukit::gate {

nlohmann::json to_json(const CaseResult& r);
CaseResult case_from_json(const nlohmann::json& j);

// The whole report: {"results": [...], "summary": {...}}.
nlohmann::json report_json(const std::vector<CaseResult>& results);

}  // namespace npukit::gate
