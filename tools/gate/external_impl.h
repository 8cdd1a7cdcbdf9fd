// Kernels that npukit did not build: `npukit gate --op OP --impl LIB.so:SYMBOL` loads one
// with the signature of include/npukit/external_kernel.h and registers it as a target of
// OP, so that the gate checks it exactly as it checks the kit's own (guarded, NaN-filled
// buffers through bind_call, in a child process).
#pragma once

#include <stdexcept>
#include <string>

#include "runtime/op_spec.h"

namespace npukit::gate {

// A library whose loading (its constructors, its dependencies') crashed a child process:
// the gate's exit 3, as for a kernel that crashes, and nothing gated.
struct ExternalLoadCrash : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Loads `impl` ("PATH.so:SYMBOL") and registers it as the kernel of `op` on target
// `target_name` (empty: SYMBOL). Returns the target name. A bad argument is an
// Errc::invalid_argument naming it, its value and the rule. The library is loaded in a
// child process first: one that crashes while loading throws ExternalLoadCrash instead of
// ending the gate.
std::string register_external_kernel(const OpSpec& op, const std::string& impl, std::string target_name);

// Loads `file` in a child process, which exits at once: a library whose loading (its
// constructors, its dependencies') crashes ends that child, not the caller. "" when it
// loaded (or failed to, which the caller's own dlopen then reports), else how the child ended.
std::string loading_crashes(const std::string& file);

// The external kernel's argument list for `op`, derived from its registry entry: one line
// per tensor (position, name, role, dims, dtypes) and per parameter (position, name, kind).
std::string external_signature(const OpSpec& op);

}  // namespace npukit::gate
