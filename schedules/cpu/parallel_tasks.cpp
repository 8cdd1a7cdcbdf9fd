#include "schedules/cpu/parallel_tasks.h"

namespace npukit::schedules::cpu {

using namespace Halide;

void parallel_unless(Func f, VarOrRVar outer, Expr serial, const std::function<void(Stage)>& rest) {
  rest(f.specialize(serial));
  f.parallel(outer);
  rest(f);
}

void parallel_unless_one_task(Func f, VarOrRVar outer, Expr tasks, const std::function<void(Stage)>& rest) {
  parallel_unless(f, outer, tasks <= 1, rest);
}

}  // namespace npukit::schedules::cpu
