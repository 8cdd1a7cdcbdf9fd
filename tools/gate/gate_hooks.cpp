// The table of every operator's gate hooks: tools/gate/hooks/<op>.cpp defines
// `GateHooks <op>_gate_hooks()`, listed here from the generated npukit/operator_list.h.
#include "tools/gate/gate_hooks.h"

#include "npukit/operator_list.h"  // generated: NPUKIT_OPERATORS(X), one X(op) per operator

namespace npukit {

#define NPUKIT_DECLARE(op) GateHooks op##_gate_hooks();
NPUKIT_OPERATORS(NPUKIT_DECLARE)
#undef NPUKIT_DECLARE

const GateHooks* gate_hooks(std::string_view name) {
  static const std::map<std::string, GateHooks, std::less<>> hooks = [] {
    std::map<std::string, GateHooks, std::less<>> m;
#define NPUKIT_ENTRY(op) m.emplace(#op, op##_gate_hooks());
    NPUKIT_OPERATORS(NPUKIT_ENTRY)
#undef NPUKIT_ENTRY
    return m;
  }();
  auto it = hooks.find(name);
  return it == hooks.end() ? nullptr : &it->second;
}

}  // namespace npukit
