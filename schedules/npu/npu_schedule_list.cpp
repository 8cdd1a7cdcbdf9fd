// Every NPU schedule: the kit's, listed from the generated npu_schedule_list.h, and those
// operator plug-ins register at run time.
#include <algorithm>
#include <mutex>

#include "npu_schedule_list.h"  // generated: NPUKIT_NPU_SCHEDULES(X), one X(op) per schedule
#include "runtime/error.h"
#include "schedules/npu/npu_schedule.h"

namespace npukit::schedules::npu {

#define NPUKIT_DECLARE(op) const NpuSchedule& npu_schedule_##op();
NPUKIT_NPU_SCHEDULES(NPUKIT_DECLARE)
#undef NPUKIT_DECLARE

namespace {

std::deque<NpuSchedule>& schedule_table() {
  static std::deque<NpuSchedule> all = [] {
    std::vector<NpuSchedule> v;
#define NPUKIT_LIST(op) v.push_back(npu_schedule_##op());
    NPUKIT_NPU_SCHEDULES(NPUKIT_LIST)
#undef NPUKIT_LIST
    std::sort(v.begin(), v.end(), [](const NpuSchedule& a, const NpuSchedule& b) { return a.op < b.op; });
    return std::deque<NpuSchedule>(v.begin(), v.end());
  }();
  return all;
}

}  // namespace

const std::deque<NpuSchedule>& npu_schedules() { return schedule_table(); }

const NpuSchedule* find_npu_schedule(const std::string& op) {
  for (const NpuSchedule& s : npu_schedules())
    if (s.op == op) return &s;
  return nullptr;
}

const NpuSchedule& register_npu_schedule(const NpuSchedule& schedule) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (find_npu_schedule(schedule.op)) fail(Errc::invalid_argument, "op '{}' has an NPU schedule already", schedule.op);
  schedule_table().push_back(schedule);
  return schedule_table().back();
}

}  // namespace npukit::schedules::npu
