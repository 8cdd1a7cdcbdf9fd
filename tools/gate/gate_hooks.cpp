// The table of every operator's gate hooks: golden/<op>.h (section NPUKIT_GATE_HOOKS_<op>) defines
// `GateHooks <op>_gate_hooks()`, listed here from the generated npukit/operator_list.h.
#include "tools/gate/gate_hooks.h"

#include "npukit/operator_list.h"  // generated: NPUKIT_OPERATORS(X), one X(op) per operator
#include "runtime/error.h"

namespace npukit {

#define NPUKIT_DECLARE(op) GateHooks op##_gate_hooks();
NPUKIT_OPERATORS(NPUKIT_DECLARE)
#undef NPUKIT_DECLARE

namespace {

// The built-in ops' hooks, then plug-ins'. A map: gate_hooks' pointers survive insertions.
std::map<std::string, GateHooks, std::less<>>& hooks_table() {
  static std::map<std::string, GateHooks, std::less<>> hooks = [] {
    std::map<std::string, GateHooks, std::less<>> m;
#define NPUKIT_ENTRY(op) m.emplace(#op, op##_gate_hooks());
    NPUKIT_OPERATORS(NPUKIT_ENTRY)
#undef NPUKIT_ENTRY
    return m;
  }();
  return hooks;
}

}  // namespace

const GateHooks* gate_hooks(std::string_view name) {
  const auto& hooks = hooks_table();
  auto it = hooks.find(name);
  return it == hooks.end() ? nullptr : &it->second;
}

void register_gate_hooks(const std::string& name, GateHooks hooks) {
  if (!hooks_table().emplace(name, std::move(hooks)).second)
    fail(Errc::invalid_argument, "op '{}' has gate hooks already", name);
}

}  // namespace npukit
