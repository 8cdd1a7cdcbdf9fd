// An operator plug-in's gate companion, libnpukit_op_<op>_gate.so (runtime/operator_plugin.h):
// the op's golden cases, reference, tolerances and NaN/Inf contract, which the gate reads
// as it reads a built-in op's (tools/gate/gate_hooks.h). Apart from the op's own library so
// that a framework that loads the op loads no golden code.
#pragma once

#include <string>
#include <string_view>

#include "golden/cases.h"
#include "golden/tolerance.h"
#include "runtime/operator_plugin.h"
#include "runtime/plugin.h"
#include "tools/gate/gate_hooks.h"

namespace npukit {

constexpr uint64_t gate_layout_key() {
  return layout_key({sizeof(GateHooks), sizeof(golden::Case), sizeof(golden::Array), sizeof(golden::Tolerance)},
                    runtime_layout_key());
}

struct OperatorGatePlugin {
  PluginStamp stamp;
  GateHooks (*hooks)();
};

// Loads the gate companion of a loaded operator plug-in (none: nothing to do) and registers
// its hooks. A companion that is missing or stamped for another op or kit is
// Errc::invalid_argument naming `what`, the paths and the rule. Once per plug-in.
void load_gate_plugin(const LoadedPlugin& plugin, std::string_view what);

}  // namespace npukit

// npukit_add_operator writes this definition; `<op>_gate_hooks()` as in the kit's tree.
#define NPUKIT_DEFINE_OPERATOR_GATE_PLUGIN(OP)                                                               \
  namespace npukit {                                                                                       \
  GateHooks OP##_gate_hooks();                                                                             \
  }                                                                                                        \
  NPUKIT_OPERATOR_PLUGIN_EXPORT const npukit::OperatorGatePlugin* npukit_operator_gate_plugin() {          \
    static const npukit::OperatorGatePlugin plugin{                                                        \
        {npukit::kOperatorPluginAbi, NPUKIT_KIT_VERSION, npukit::gate_layout_key(), #OP}, &npukit::OP##_gate_hooks}; \
    return &plugin;                                                                                        \
  }
