// Parallel loops that cost nothing when there is only one task. Halide's thread pool takes
// its lock, queues the task and wakes the pool on every parallel loop, even for a single
// task: on Zen 3 that was 0.2 us of rms_norm's 1.8 us at [1, 4096] fp16, and a decode step
// runs most ops on one row or one token.
#pragma once

#include <functional>

#include "Halide.h"

namespace npukit::schedules::cpu {

// Runs `outer` of `f` in parallel where `tasks` > 1 and serially where it is 1 (a
// specialization); `rest` schedules the remaining loops of both versions (Halide copies a
// schedule into a specialization when it is made, so what comes later must be applied to
// each).
void parallel_unless_one_task(Halide::Func f, Halide::VarOrRVar outer, Halide::Expr tasks,
                              const std::function<void(Halide::Stage)>& rest);

// The same with any condition: `outer` serially where `serial` holds, for calls whose
// tasks are too small to pay for waking the pool. `serial_only`, if given, schedules the
// serial version alone, before `rest` (so that specializations `rest` makes inherit it).
void parallel_unless(Halide::Func f, Halide::VarOrRVar outer, Halide::Expr serial,
                     const std::function<void(Halide::Stage)>& rest,
                     const std::function<void(Halide::Stage)>& serial_only = nullptr);

}  // namespace npukit::schedules::cpu
