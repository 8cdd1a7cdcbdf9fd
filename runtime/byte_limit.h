// Size limits on what the kit reads whole (a .npy tensor, an architecture spec), which a
// user can raise or lower through the environment: NPUKIT_MAX_NPY_BYTES (4 GiB unless set),
// NPUKIT_MAX_SPEC_BYTES (1 MiB). docs/reliability.md states them.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

#include "runtime/message.h"

namespace npukit {

// The environment variable's value, a positive decimal number of bytes, or `fallback` when
// it is unset or empty. Anything else (a sign, a suffix, 0, past 2^64) is refused, naming
// the variable: a typo must not lift the bound silently.
inline uint64_t byte_limit(const char* variable, uint64_t fallback) {
  const char* env = std::getenv(variable);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(env, &end, 10);
  if (*end != '\0' || errno == ERANGE || v == 0 || env[0] < '0' || env[0] > '9') {
    throw std::runtime_error(message("{}: '{}' is not a positive number of bytes", variable, env));
  }
  return v;
}

}  // namespace npukit
