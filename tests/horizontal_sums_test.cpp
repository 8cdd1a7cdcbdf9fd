// ops::HorizontalSums: AVX2's transposed sums (eight 8-lane vectors to one vector of their
// eight sums) rewritten as vhaddps's in-lane shuffles give the same bits as Halide's own
// lowering, and nothing else is rewritten. JIT-compiles for AVX2, which every CPU this kit
// is built on has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "Halide.h"
#include "ops/horizontal_sums.h"

namespace npukit {
namespace {

using namespace Halide;
using namespace Halide::Internal;

const Target kAvx2("x86-64-linux-sse41-avx-f16c-fma-avx2");

// Counts the VectorReduce nodes lowering leaves.
struct CountReduces : IRMutator {
  explicit CountReduces(int* n) : n_(n) {}
  using IRMutator::visit;
  Expr visit(const VectorReduce* op) override {
    ++*n_;
    return IRMutator::visit(op);
  }
  int* n_;
};

// out(x) = Σ_r in(r, x) over `factor` values of r, with r and x vectorized together: Halide
// lowers the sum to one vector_reduce(Add) of factor · lanes values into `lanes` per vector.
struct Sums {
  Buffer<float> out;
  int rewritten = 0;
  int reduces_left = 0;
};
Sums transposed_sums(const Buffer<float>& in, int factor, int lanes, bool pass, Type type = Float(32)) {
  ImageParam p(type, 2, "in");
  RDom r(0, factor, "r");
  Var x("x");
  Func f("f");
  f(x) = cast(type, 0);
  f(x) += p(r, x);
  f.vectorize(x, lanes);
  f.update().atomic().vectorize(r).vectorize(x, lanes);
  Pipeline pipe(f);
  Sums s;
  ops::HorizontalSums* hs = nullptr;
  if (pass) {
    hs = new ops::HorizontalSums();
    pipe.add_custom_lowering_pass(hs);
  }
  pipe.add_custom_lowering_pass(new CountReduces(&s.reduces_left));
  pipe.compile_jit(kAvx2);
  if (hs) s.rewritten = hs->rewritten;
  if (type != Float(32)) return s;
  p.set(in);
  s.out = pipe.realize({in.dim(1).extent()}, kAvx2);
  return s;
}

// Values over 40 binary orders of magnitude, so that the order of the adds shows in the bits.
Buffer<float> wide_values(int factor, int n) {
  Buffer<float> in(factor, n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  in.for_each_value([&](float& v) { v = std::ldexp(mantissa(rng), exponent(rng)); });
  return in;
}

TEST(HorizontalSums, SameBitsAsHalidesLoweringAndAsPairwiseSums) {
  const int n = 64;
  const Buffer<float> in = wide_values(8, n);
  const Sums halide = transposed_sums(in, 8, 8, false);
  const Sums ours = transposed_sums(in, 8, 8, true);
  EXPECT_EQ(ours.rewritten, 1);
  EXPECT_EQ(ours.reduces_left, 0);
  EXPECT_EQ(halide.reduces_left, 1);
  for (int x = 0; x < n; ++x) {
    auto v = [&](int i) { return in(i, x); };
    const float pairwise = ((v(0) + v(1)) + (v(2) + v(3))) + ((v(4) + v(5)) + (v(6) + v(7)));
    EXPECT_EQ(std::memcmp(&ours.out(x), &halide.out(x), sizeof(float)), 0) << x;
    EXPECT_EQ(std::memcmp(&ours.out(x), &pairwise, sizeof(float)), 0) << x;
  }
}

TEST(HorizontalSums, KeepsNaNAndInfinities) {
  Buffer<float> in = wide_values(8, 16);
  in(3, 0) = NAN;
  in(0, 1) = INFINITY;
  in(5, 2) = -INFINITY;
  in(1, 3) = INFINITY;
  in(6, 3) = -INFINITY;
  const Sums ours = transposed_sums(in, 8, 8, true);
  EXPECT_TRUE(std::isnan(ours.out(0)));
  EXPECT_EQ(ours.out(1), INFINITY);
  EXPECT_EQ(ours.out(2), -INFINITY);
  EXPECT_TRUE(std::isnan(ours.out(3)));
}

TEST(HorizontalSums, LeavesOtherReductionsToHalide) {
  // Sums of 4 or 16 lanes, 4 or 16 sums per vector, and integers are not its shape.
  for (auto [factor, lanes] : std::vector<std::pair<int, int>>{{4, 8}, {16, 8}, {8, 4}, {8, 16}}) {
    SCOPED_TRACE(testing::Message() << factor << " into " << lanes);
    const Buffer<float> in = wide_values(factor, 64);
    const Sums ours = transposed_sums(in, factor, lanes, true);
    EXPECT_EQ(ours.rewritten, 0);
    const Sums halide = transposed_sums(in, factor, lanes, false);
    for (int x = 0; x < 64; ++x) EXPECT_EQ(std::memcmp(&ours.out(x), &halide.out(x), sizeof(float)), 0) << x;
  }
  EXPECT_EQ(transposed_sums(Buffer<float>(), 8, 8, true, Int(32)).rewritten, 0);
}

}  // namespace
}  // namespace npukit
