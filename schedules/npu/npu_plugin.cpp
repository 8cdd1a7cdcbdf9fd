#include "schedules/npu/npu_plugin.h"

#include "runtime/error.h"
#include "simulator/analysis/npu_sim_kernels.h"

namespace npukit {

void load_npu_plugin(const LoadedPlugin& plugin, std::string_view what) {
  const auto* n = load_companion<OperatorNpuPlugin>(plugin, plugin.npu_path, "npukit_operator_npu_plugin",
                                                    npu_layout_key(), "NPU companion", what);
  if (n == nullptr) return;
  const schedules::npu::NpuSchedule& s = n->schedule();
  if (s.op != plugin.plugin->stamp.op)
    fail(Errc::invalid_argument, "{} {}: its NPU companion {}: its schedule is for op '{}', not '{}'", what,
         plugin.path, plugin.npu_path, s.op, plugin.plugin->stamp.op);
  sim::register_npu_sim_kernel(schedules::npu::register_npu_schedule(s));
}

}  // namespace npukit
