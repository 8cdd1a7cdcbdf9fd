// Kernels that npukit did not build: `npukit gate --op OP --impl LIB.so:SYMBOL` loads one
// with the signature of include/npukit/external_kernel.h and registers it as a target of
// OP, so that the gate checks it exactly as it checks the kit's own (guarded, NaN-filled
// buffers through bind_call, in a child process).
#pragma once

#include <string>

#include "runtime/op_spec.h"

namespace npukit::gate {

// Loads `impl` ("PATH.so:SYMBOL") and registers it as the kernel of `op` on target
// `target_name` (empty: SYMBOL). Returns the target name. A bad argument is an
// Errc::invalid_argument naming it, its value and the rule.
std::string register_external_kernel(const OpSpec& op, const std::string& impl, std::string target_name);

// The external kernel's argument list for `op`, derived from its registry entry: one line
// per tensor (position, name, role, dims, dtypes) and per parameter (position, name, kind).
std::string external_signature(const OpSpec& op);

}  // namespace npukit::gate
