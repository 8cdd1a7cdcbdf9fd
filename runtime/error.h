// npukit's error type. Inside the kit errors are exceptions; every boundary (the C ABI,
// the command line, the gate) turns them into a status, a message and an exit code.
#pragma once

#include <stdexcept>
#include <string>

namespace npukit {

enum class Errc {
  invalid_argument,  // the caller's input breaks a rule: shape, dtype, parameter, null pointer
  unsupported,       // valid request, but no kernel for it here (target, dtype, CPU features)
  kernel_failed,     // the kernel itself reported an error (Halide runtime, device API)
  internal,          // a bug in npukit
};

class Error : public std::runtime_error {
 public:
  Error(Errc code, const std::string& message) : std::runtime_error(message), code_(code) {}
  Errc code() const { return code_; }

 private:
  Errc code_;
};

[[noreturn]] inline void fail(Errc code, const std::string& message) { throw Error(code, message); }

}  // namespace npukit
