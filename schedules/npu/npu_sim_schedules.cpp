#include "schedules/npu/npu_sim_schedules.h"

#include <mutex>
#include <string>
#include <vector>

#include "runtime/registry.h"
#include "schedules/npu/attention.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

void register_npu_sim_schedules() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> targets;
    for (const std::string& p : sim::preset_names()) targets.push_back("npu-sim:" + p);
    register_kernel("attention", "npu-sim", attention_npu_sim, targets);
  });
}

}  // namespace npukit::schedules::npu
