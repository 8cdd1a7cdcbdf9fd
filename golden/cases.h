// What every operator's input generator returns: named cases of one input class
// (golden/case_builder.h builds them).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>

#include "golden/array.h"
#include "golden/input_class.h"

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

// What a golden reference that is not written yet throws (`npukit new-op` writes such a
// stub): the gate reports it as the reason nothing was checked, never as a pass.
struct NotWritten : std::logic_error {
  using std::logic_error::logic_error;
};

// Shortest decimal text that reads back (strtod, std::stod) as exactly v: "1e-05", "0",
// "10000" (fmt's shortest round-trip form).
inline std::string number_text(double v) { return fmt::format("{}", v); }

}  // namespace npukit::golden
