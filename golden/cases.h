// What every operator's input generator returns: named cases of one input class.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "golden/array.h"

namespace npukit::golden {

// One input case of an operator, self-contained: the gate binds it exactly as it would
// bind tensors and parameters given by a user.
struct Case {
  std::string name;                            // short, e.g. "rows=3 hidden=4097"
  std::map<std::string, int64_t> dims;         // named dimensions, e.g. "rows", "hidden"
  std::map<std::string, std::string> params;   // as text, parsed like user input; doubles
                                               // are written so that they read back exactly
  std::map<std::string, Array> inputs;         // by tensor name
};

// Every operator has the same input classes, so a gate run is comparable across ops.
inline std::vector<std::string> input_classes() {
  return {"normal", "boundary", "overflow", "nan_inf", "shape"};
}

// Throws std::invalid_argument naming the op and the class unless `input_class` is one of
// input_classes(): what every op's case generator checks first.
inline void check_input_class(std::string_view op, std::string_view input_class) {
  const std::vector<std::string> classes = input_classes();
  if (std::find(classes.begin(), classes.end(), input_class) == classes.end()) {
    throw std::invalid_argument(fmt::format("{}: unknown input class '{}'", op, input_class));
  }
}

// Shortest decimal text that reads back (strtod, std::stod) as exactly v: "1e-05", "0",
// "10000" (fmt's shortest round-trip form).
inline std::string number_text(double v) { return fmt::format("{}", v); }

}  // namespace npukit::golden
