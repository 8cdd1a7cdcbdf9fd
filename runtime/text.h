// Small text helpers shared by the tools and reports: "a, b, c" lists of known names for
// error messages, messages kept on one line, and XML escaping for the JUnit and SVG reports.
#pragma once

#include <cstddef>
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

// The most bytes of a message the kit prints or stores (docs/reliability.md): an echo of a
// 10 MB YAML value or of a binary file must not become a 10 MB error line.
inline constexpr size_t kMessageLimit = 1024;

// `s` as a message: one printable line of UTF-8 of at most kMessageLimit bytes. Every
// control byte (a newline, a tab, \x01, DEL, the C1 controls) and every byte that is no
// part of a well-formed UTF-8 sequence (binary input) becomes '?'; UTF-8 text (paths)
// stays. A longer message is cut at a character boundary and ends "... [N bytes cut]".
// The fuzz targets found such echoes (tests/fuzz/); main() and the C ABI pass every
// message through here.
inline std::string one_line(const std::string& in) {
  std::string s;
  size_t i = 0;
  while (i < in.size()) {
    const auto c = static_cast<unsigned char>(in[i]);
    size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
    bool ok = n > 0 && i + n <= in.size() && !(n > 1 && c < 0xC2);  // C0/C1 leads: overlong
    for (size_t k = 1; ok && k < n; ++k) ok = (static_cast<unsigned char>(in[i + k]) & 0xC0) == 0x80;
    if (ok && n == 2 && c == 0xC2 && static_cast<unsigned char>(in[i + 1]) < 0xA0) ok = false;  // C1 controls
    if (!ok) n = 1;
    if (s.size() + n > kMessageLimit) break;
    if (!ok || c < 0x20 || c == 0x7f) {
      s += '?';
    } else {
      s.append(in, i, n);
    }
    i += n;
  }
  if (i < in.size()) s += "... [" + std::to_string(in.size() - i) + " bytes cut]";
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
