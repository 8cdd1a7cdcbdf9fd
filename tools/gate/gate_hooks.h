// What the gate needs of an op beyond its registry entry: golden cases, reference,
// tolerances and NaN/Inf contract (golden/<op>.h, `GateHooks <op>_gate_hooks()`),
// keyed by op name, so that the registry and libnpukit.so carry no golden code.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "golden/cases.h"
#include "golden/tolerance.h"
#include "npukit/dtype.h"

namespace npukit {

struct GateHooks {
  std::vector<DType> dtypes;  // storage types the gate covers
  // The cases of one input class for one dtype (golden/<op>.h).
  std::function<std::vector<golden::Case>(golden::InputClass, DType)> cases;
  // Expected outputs in double, before rounding to the output dtype, keyed by output name;
  // inout tensors too, with their contents after the call.
  std::function<std::map<std::string, std::vector<double>>(const golden::Case&)> reference;
  // The tolerance of one output of one case: the case is there for ops whose error bound
  // scales with the inputs' magnitude rather than the output's.
  std::function<golden::Tolerance(const golden::Case&, const std::string& output, DType)> tolerance;
  std::string nan_contract;  // one paragraph, printed by `npukit list --op`
};

// The hooks of op `name`, or nullptr when the gate has none for it.
const GateHooks* gate_hooks(std::string_view name);

// Adds the hooks of an op registered at run time (an operator plug-in's gate companion,
// tools/gate/gate_plugin.h). An op that has hooks already is Errc::invalid_argument. Not
// concurrently with gate_hooks().
void register_gate_hooks(const std::string& name, GateHooks hooks);

}  // namespace npukit
