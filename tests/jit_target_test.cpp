// The Halide target npukit derives from cpuid runs here, on the pattern that breaks
// Halide's own `host` on AMD Zen 4: a u8 x s8 dot product reduced by 4, which Halide 14
// lowers to vpdpbusd. With the sapphirerapids feature on a CPU without AVX-VNNI it emits
// VEX vpdpbusd on narrow vectors and dies with SIGILL; npukit's target must not.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "Halide.h"
#include "runtime/cpu_features.h"

namespace npukit {
namespace {

TEST(JitTarget, DotProductRunsAndMatches) {
  using namespace Halide;
  const Target target(halide_cpu_target(cpu_features()));
  ASSERT_FALSE(target.has_unknowns());

  const int K = 256, N = 64;
  Buffer<uint8_t> a(K);
  Buffer<int8_t> b(K, N);
  for (int k = 0; k < K; ++k) a(k) = static_cast<uint8_t>((k * 37) % 256);
  for (int n = 0; n < N; ++n) {
    for (int k = 0; k < K; ++k) b(k, n) = static_cast<int8_t>((k * 11 + n * 5) % 256 - 128);
  }

  Func dot("dot");
  Var n("n");
  RDom r(0, K);
  dot(n) = 0;
  dot(n) += cast<int32_t>(a(r)) * cast<int32_t>(b(r, n));
  RVar ro("ro"), ri("ri");
  dot.update().split(r, ro, ri, 4).reorder(ri, n, ro).atomic().vectorize(ri).vectorize(n, 8);
  dot.vectorize(n, 8);

  const std::string asm_path = testing::TempDir() + "/npukit_jit_dot.s";
  dot.compile_to_assembly(asm_path, {}, "dot", target);
  std::ifstream in(asm_path);
  std::stringstream text;
  text << in.rdbuf();
  if (!cpu_features().avxvnni) {
    EXPECT_EQ(text.str().find("{vex} vpdpbusd"), std::string::npos) << "VEX vpdpbusd on a CPU without AVX-VNNI";
  }

  Buffer<int32_t> out = dot.realize({N}, target);
  for (int j = 0; j < N; ++j) {
    int32_t want = 0;
    for (int k = 0; k < K; ++k) want += int32_t(a(k)) * int32_t(b(k, j));
    ASSERT_EQ(out(j), want) << j;
  }
}

}  // namespace
}  // namespace npukit
