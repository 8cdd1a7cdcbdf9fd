// What an operator plug-in exports, and what the kit checks before it trusts it.
//
// npukit_add_operator (the installed CMake package, cmake/NpukitOperatorPlugin.cmake) builds
// an op of its own into up to three libraries, split as the kit's own code is split, so that
// a framework that loads the op gets neither golden code nor libHalide:
//   libnpukit_op_<op>.so       its registry entry and AOT kernels     npukit_operator_plugin()
//   libnpukit_op_<op>_gate.so  its golden cases, reference, hooks     npukit_operator_gate_plugin()
//   libnpukit_op_<op>_npu.so   its NPU schedule (links libHalide)     npukit_operator_npu_plugin()
// Each exports one extern "C" function returning its descriptor; everything else in them is
// hidden, their Halide runtime included. The descriptors hand over C++ structures (OpSpec,
// GateHooks, NpuSchedule) whose code stays in the plug-in, so the plug-in must have been
// built against this very kit: every descriptor starts with a PluginStamp that the loader
// reads first (runtime/plugin.h) and refuses on any difference.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "HalideRuntime.h"
#include "npukit/kit_version.h"  // generated: NPUKIT_KIT_VERSION
#include "runtime/op_spec.h"

namespace npukit {

// Bumped whenever a descriptor below, or a structure one hands over, changes in a way the
// kit version does not show (between releases, on a development branch).
// 2: PackedConstant gained its GPU copies (`gpu`), which a plug-in's constant packer returns.
inline constexpr int kOperatorPluginAbi = 2;

// A key of the sizes of the structures a plug-in hands over, as the compiler that built it
// saw them: a plug-in built with another standard library ABI or other headers differs.
constexpr uint64_t layout_key(std::initializer_list<size_t> sizes, uint64_t h = 1469598103934665603ull) {
  for (size_t s : sizes) h = (h ^ static_cast<uint64_t>(s)) * 1099511628211ull;
  return h;
}

constexpr uint64_t runtime_layout_key() {
  return layout_key({sizeof(OpSpec), sizeof(TensorSpec), sizeof(ParamSpec), sizeof(Call), sizeof(TensorView),
                     sizeof(Params), sizeof(std::string), sizeof(std::function<void(const Call&)>),
                     sizeof(PackedConstant)});
}

// The first member of every descriptor, the same in every kit version.
struct PluginStamp {
  int abi;                  // kOperatorPluginAbi of the kit it was built against
  const char* kit_version;  // NPUKIT_KIT_VERSION of that kit
  uint64_t layout;          // the layout key of its kind of descriptor
  const char* op;           // the op it carries
};

// libnpukit_op_<op>.so: the op's registry entry, whose kernels call the plug-in's own
// Halide runtime.
struct OperatorPlugin {
  PluginStamp stamp;
  const OpSpec& (*spec)();
  // halide_set_num_threads of the plug-in's Halide runtime, so that the gate's --repeat
  // sets its thread pool as it sets the kit's.
  int (*set_num_threads)(int);
  // The file names of its companions, in the same directory; nullptr where it has none.
  const char* gate_library;
  const char* npu_library;
};

}  // namespace npukit

// The definition of the plug-in's exported function; npukit_add_operator writes it (the
// kit's own spelling of the entry function, `<op>_spec()`, is the plug-in's too).
#define NPUKIT_OPERATOR_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#define NPUKIT_DEFINE_OPERATOR_PLUGIN(OP, GATE_LIBRARY, NPU_LIBRARY)                                           \
  namespace npukit {                                                                                           \
  const OpSpec& OP##_spec();                                                                                   \
  }                                                                                                            \
  NPUKIT_OPERATOR_PLUGIN_EXPORT const npukit::OperatorPlugin* npukit_operator_plugin() {                       \
    static const npukit::OperatorPlugin plugin{                                                                \
        {npukit::kOperatorPluginAbi, NPUKIT_KIT_VERSION, npukit::runtime_layout_key(), #OP}, &npukit::OP##_spec, \
        &halide_set_num_threads, GATE_LIBRARY, NPU_LIBRARY};                                                   \
    return &plugin;                                                                                            \
  }
