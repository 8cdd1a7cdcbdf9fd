#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void parallel_unless_one_task(Func f, VarOrRVar outer, Expr tasks, const std::function<void(Stage)>& rest) {
  Stage one_thread = f.specialize(tasks <= 1);
  rest(one_thread);
  f.parallel(outer);
  rest(f);
}

}  // namespace npukit::schedules::cpu
