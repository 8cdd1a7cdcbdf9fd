// How the kit formats text, through fmt: a message (an error, a warning, an echo of input)
// is one line by message()'s rule; a report (a table, an SVG, a plan) is built by append().
// runtime/error.h's Error applies the same one_line rule to whatever text it is given (and
// fail() formats with fmt), so no error can carry a newline, a control byte or a megabyte of
// someone's input, whoever composed it.
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <string>
#include <utility>

#include "runtime/text.h"

namespace npukit {

// fmt's format, then one_line's rule (runtime/text.h: one printable line of at most
// kMessageLimit bytes, a cut marked).
template <class... Args>
std::string message(fmt::format_string<Args...> format, Args&&... args) {
  return one_line(fmt::format(format, std::forward<Args>(args)...));
}

// Appends to a report under construction (many lines; the caller's text, not input).
template <class... Args>
void append(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

}  // namespace npukit
