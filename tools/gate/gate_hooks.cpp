// The table of every shipped op's gate hooks (one tools/gate/hooks/<op>.cpp each).
#include "tools/gate/gate_hooks.h"

namespace npukit {

GateHooks add_rms_norm_gate_hooks();
GateHooks attention_gate_hooks();
GateHooks int8_gemm_gate_hooks();
GateHooks per_token_quant_gate_hooks();
GateHooks qkv_attention_gate_hooks();
GateHooks rms_norm_gate_hooks();
GateHooks rope_gate_hooks();
GateHooks silu_mul_gate_hooks();

const GateHooks* gate_hooks(std::string_view name) {
  static const std::map<std::string, GateHooks, std::less<>> hooks = {
      {"add_rms_norm", add_rms_norm_gate_hooks()},
      {"attention", attention_gate_hooks()},
      {"int8_gemm", int8_gemm_gate_hooks()},
      {"per_token_quant", per_token_quant_gate_hooks()},
      {"qkv_attention", qkv_attention_gate_hooks()},
      {"rms_norm", rms_norm_gate_hooks()},
      {"rope", rope_gate_hooks()},
      {"silu_mul", silu_mul_gate_hooks()},
  };
  auto it = hooks.find(name);
  return it == hooks.end() ? nullptr : &it->second;
}

}  // namespace npukit
