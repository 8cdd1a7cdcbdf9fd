// A path as one word of a shell command: the repro lines are meant to be pasted.
#pragma once

#include <string>

namespace npukit::gate {

// `s` as is when it has only characters no shell treats specially, else single-quoted.
inline std::string shell_word(const std::string& s) {
  bool plain = !s.empty();
  for (char c : s) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      std::string("/._-+:=,@%").find(c) != std::string::npos;
    plain = plain && safe;
  }
  if (plain) return s;
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace npukit::gate
