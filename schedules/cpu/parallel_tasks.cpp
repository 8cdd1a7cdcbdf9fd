#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void parallel_unless(Func f, VarOrRVar outer, Expr serial, const std::function<void(Stage)>& rest,
                     const std::function<void(Stage)>& serial_only) {
  Stage one_thread = f.specialize(serial);
  if (serial_only) serial_only(one_thread);
  rest(one_thread);
  f.parallel(outer);
  rest(f);
}

void parallel_unless_one_task(Func f, VarOrRVar outer, Expr tasks, const std::function<void(Stage)>& rest) {
  parallel_unless(f, outer, tasks <= 1, rest);
}

}  // namespace npukit::schedules::cpu
