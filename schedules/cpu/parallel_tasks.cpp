#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void parallel_unless_one_task(Func f, VarOrRVar outer, Expr tasks, const std::function<void(Stage)>& rest) {
  rest(f.specialize(tasks <= 1));
  f.parallel(outer);
  rest(f);
}

}  // namespace npukit::schedules::cpu
