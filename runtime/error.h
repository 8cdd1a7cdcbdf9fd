// npukit's error type. Inside the kit errors are exceptions; every boundary (the C ABI,
// the command line, the gate) turns them into a status, a message and an exit code.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "runtime/message.h"

namespace npukit {

enum class Errc {
  invalid_argument,  // the caller's input breaks a rule: shape, dtype, parameter, null pointer
  unsupported,       // valid request, but no kernel for it here (target, dtype, CPU features)
  kernel_failed,     // the kernel itself reported an error (Halide runtime, device API)
  internal,          // a bug in npukit
};

class Error : public std::runtime_error {
 public:
  // Every error is one printable line, whoever composed it (runtime/message.h).
  Error(Errc code, const std::string& what) : std::runtime_error(one_line(what)), code_(code) {}
  Errc code() const { return code_; }

 private:
  Errc code_;
};

[[noreturn]] inline void fail(Errc code, const std::string& what) { throw Error(code, what); }

// fail(Errc::invalid_argument, "'{}' has {} dims, expected {}", name, ndim, want).
template <class Arg, class... Args>
[[noreturn]] void fail(Errc code, fmt::format_string<Arg, Args...> format, Arg&& arg, Args&&... args) {
  throw Error(code, fmt::format(format, std::forward<Arg>(arg), std::forward<Args>(args)...));
}

}  // namespace npukit
