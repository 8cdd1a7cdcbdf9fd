// What every operator's input generator returns: named cases of one input class.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
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

// Shortest decimal text that reads back (strtod, std::stod) as exactly v: "1e-05", "0".
inline std::string number_text(double v) {
  char buf[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

}  // namespace npukit::golden
