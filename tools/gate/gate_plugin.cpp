#include "tools/gate/gate_plugin.h"

namespace npukit {

void load_gate_plugin(const LoadedPlugin& plugin, std::string_view what) {
  if (const auto* g = load_companion<OperatorGatePlugin>(plugin, plugin.gate_path, "npukit_operator_gate_plugin",
                                                         gate_layout_key(), "gate companion", what))
    register_gate_hooks(plugin.plugin->stamp.op, g->hooks());
}

}  // namespace npukit
