// An operator plug-in's NPU companion, libnpukit_op_<op>_npu.so (runtime/operator_plugin.h):
// the op's NPU schedule, which `npukit sim`, `tune` and the npu-sim targets read as they
// read a built-in op's (schedules/npu/npu_schedule.h). Apart from the op's own library
// because it links libHalide, which a framework that loads the op must not get.
#pragma once

#include <string>
#include <string_view>

#include "runtime/operator_plugin.h"
#include "runtime/plugin.h"
#include "schedules/npu/npu_schedule.h"

namespace npukit {

constexpr uint64_t npu_layout_key() {
  return layout_key({sizeof(schedules::npu::NpuSchedule), sizeof(schedules::npu::NpuPipeline),
                     sizeof(schedules::npu::NpuPlan), sizeof(sim::ArchSpec), sizeof(Halide::Func)},
                    runtime_layout_key());
}

struct OperatorNpuPlugin {
  PluginStamp stamp;
  const schedules::npu::NpuSchedule& (*schedule)();
};

// Loads the NPU companion of a loaded operator plug-in (none: nothing to do), registers
// its schedule and its npu-sim kernel. A companion that is missing or stamped for another op
// or kit is Errc::invalid_argument naming `what`, the paths and the rule. Once per plug-in.
void load_npu_plugin(const LoadedPlugin& plugin, std::string_view what);

}  // namespace npukit

// npukit_add_operator writes this definition; `npu_schedule_<op>()` as in the kit's tree.
#define NPUKIT_DEFINE_OPERATOR_NPU_PLUGIN(OP)                                                                  \
  namespace npukit::schedules::npu {                                                                         \
  const NpuSchedule& npu_schedule_##OP();                                                                    \
  }                                                                                                          \
  NPUKIT_OPERATOR_PLUGIN_EXPORT const npukit::OperatorNpuPlugin* npukit_operator_npu_plugin() {              \
    static const npukit::OperatorNpuPlugin plugin{                                                           \
        {npukit::kOperatorPluginAbi, NPUKIT_KIT_VERSION, npukit::npu_layout_key(), #OP},                     \
        &npukit::schedules::npu::npu_schedule_##OP};                                                         \
    return &plugin;                                                                                          \
  }
