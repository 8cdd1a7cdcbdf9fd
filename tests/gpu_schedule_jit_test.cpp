// The set-up every GPU schedule test relies on: an OpenCL pipeline JIT-compiled in this
// process (which links libHalide's LLVM 14) runs on PoCL (LLVM 15) from a cold cache.
// The schedules' own tests: gpu_<op>_jit_test.cpp.
#include <gtest/gtest.h>

#include "tests/gpu_jit.h"

namespace npukit {
namespace {

using namespace Halide;

TEST(GpuJit, OpenClRunsOnPoclWithSharedStaging) {
  const Target t = gpu_test::opencl_target();
  Buffer<int32_t> in(37, 5);
  for (int y = 0; y < 5; ++y)
    for (int x = 0; x < 37; ++x) in(x, y) = x * 100 + y;
  Func f("f");
  Var x("x"), y("y"), xo("xo"), yo("yo"), xi("xi"), yi("yi");
  f(x, y) = in(36 - x, y) * 2 + 1;
  f.gpu_tile(x, y, xo, yo, xi, yi, 16, 4, TailStrategy::GuardWithIf);
  Func staged = Func(in).in();
  staged.compute_at(f, xo).store_in(MemoryType::GPUShared).gpu_threads(staged.args()[0]);
  Buffer<int32_t> out(37, 5);
  gpu_test::realize_on(Pipeline(f), out, t);
  for (int yy = 0; yy < 5; ++yy)
    for (int xx = 0; xx < 37; ++xx) ASSERT_EQ(out(xx, yy), (36 - xx) * 100 * 2 + yy * 2 + 1) << xx << ", " << yy;
}

}  // namespace
}  // namespace npukit
