// Integer evaluation of Halide Exprs from the lowered nest under a binding of names to
// values: loop extents, allocation sizes and addresses become numbers for one shape.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <optional>
#include <string>

#include "Halide.h"

namespace npukit::sim {

using Bindings = std::unordered_map<std::string, int64_t>;

// The value of `e` (an integer or boolean expression) under `env`, or nullopt when it
// uses a name `env` lacks or an operation it cannot evaluate (a load, a call).
// Division and modulo round as Halide does (toward −∞; x / 0 = 0).
std::optional<int64_t> eval_int(const Halide::Expr& e, const Bindings& env);

}  // namespace npukit::sim
