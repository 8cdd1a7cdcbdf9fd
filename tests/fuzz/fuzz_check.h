// What every fuzz target checks besides the sanitizers: its invariants, and that an error
// message is what the kit promises (one line that names the source).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace npukit::fuzz {

// A broken invariant ends the run as a crash, so that libFuzzer saves the input.
[[noreturn]] inline void violated(const char* what, const char* file, int line) {
  std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", file, line, what);
  std::abort();
}

#define NPUKIT_FUZZ_CHECK(cond) ((cond) ? (void)0 : ::npukit::fuzz::violated(#cond, __FILE__, __LINE__))

// One line starting with `prefix` (the file or call it is about).
inline void check_message(const std::string& message, const std::string& prefix) {
  NPUKIT_FUZZ_CHECK(message.compare(0, prefix.size(), prefix) == 0);
  NPUKIT_FUZZ_CHECK(message.find('\n') == std::string::npos);
}

}  // namespace npukit::fuzz
