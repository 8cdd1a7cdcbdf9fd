// Small text helpers shared by the tools and reports: "a, b, c" lists of known names for
// error messages, messages kept on one line, and XML escaping for the JUnit and SVG reports.
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

// `s` with every control byte (a newline, a tab, \x01, DEL) as '?': a message that echoes
// what a file or a caller gave (a key, a dtype, a tensor name) stays one line. Bytes from
// 0x80 up (UTF-8 paths) stay. The fuzz targets found such echoes (tests/fuzz/).
inline std::string one_line(std::string s) {
  for (char& c : s) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return s;
}

// `s` as XML character data or attribute text. XML 1.0 forbids most control characters
// even when escaped, so they are dropped.
inline std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

}  // namespace npukit
