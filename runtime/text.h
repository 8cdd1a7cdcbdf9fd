// "a, b, c": the lists of known names that error messages offer.
#pragma once

#include <string>
#include <vector>

namespace npukit {

// Joins name(item) for every item of `items`, comma separated.
template <class Range, class Name>
std::string join_names(const Range& items, Name name) {
  std::string s;
  for (const auto& item : items) s += (s.empty() ? "" : ", ") + std::string(name(item));
  return s;
}

inline std::string join_names(const std::vector<std::string>& names) {
  return join_names(names, [](const std::string& n) { return n; });
}

}  // namespace npukit
