// An OpSpec as the C ABI's npukit_op_info (npukit_op_describe): plain C structs over
// storage kept for the life of the process, built once per op on first use.
#pragma once

#include "npukit/npukit.h"
#include "runtime/op_spec.h"

namespace npukit {

// The description of `op`; the same pointer on every call for the same op. Thread-safe.
const npukit_op_info* describe(const OpSpec& op);

}  // namespace npukit
