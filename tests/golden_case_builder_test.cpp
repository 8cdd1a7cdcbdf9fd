// golden/input_class.h and golden/case_builder.h: the class table, and the builder every
// op's cases use (streams, slices, rounding, NaN/Inf fills, per-class dispatch).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "golden/case_builder.h"
#include "golden/half.h"

namespace npukit::golden {
namespace {

TEST(GoldenInputClass, NamesRoundTripInTheGatesOrder) {
  EXPECT_EQ(input_class_names(), (std::vector<std::string>{"normal", "boundary", "overflow", "nan_inf", "shape"}));
  for (InputClass c : all_input_classes()) EXPECT_EQ(find_input_class(input_class_name(c)), c);
  EXPECT_FALSE(find_input_class("huge").has_value());
}

TEST(GoldenCaseBuilder, NamesStreamsAfterOpClassAndTensor) {
  CaseBuilder b("op", InputClass::nan_inf, DType::float32);
  b.add(sizes_text({{"rows", 3}, {"hidden", 4097}}), {{"rows", 3}, {"hidden", 4097}});
  b.note("eps=0");
  EXPECT_EQ(b.last().name, "rows=3 hidden=4097 eps=0");
  EXPECT_EQ(b.stream("x"), "op/nan_inf/x");
  EXPECT_EQ(b.index(), 0u);
  // A draw is the plain make_* of its stream and the case's index: nothing else moves it.
  const Array x = b.normal("x", {2, 5}, 0, 1);
  const Array want = make_normal("op/nan_inf/x", 0, DType::float32, {2, 5}, 0, 1);
  EXPECT_EQ(x.values, want.values);
  b.add("second", {});
  EXPECT_EQ(b.index(), 1u);
  EXPECT_NE(b.normal("x", {2, 5}, 0, 1).values, want.values);
}

TEST(GoldenCaseBuilder, EditsRoundToTheTensorsDtypeInsideTheirSlice) {
  CaseBuilder b("op", InputClass::boundary, DType::float16);
  b.add("c", {});
  b.last().inputs["x"] = make_constant(DType::float16, {3, 2, 4}, 1);
  b.fill("x", 0.1, {1, 1, 2});  // axis 1, index 1 of every row
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t k = 0; k < 4; ++k) {
      EXPECT_EQ(b.input("x").values[static_cast<size_t>((i * 2 + 0) * 4 + k)], 1.0);
      EXPECT_EQ(b.input("x").values[static_cast<size_t>((i * 2 + 1) * 4 + k)], round_to_dtype(0.1, DType::float16));
    }
  }
  b.scale("x", 1e6, row(2));  // past fp16's range: +Inf, as storage rounds it
  EXPECT_TRUE(std::isinf(b.input("x").values[16]));
  EXPECT_EQ(b.input("x").values[0], 1.0);
  b.set("x", {0, 0, 3}, kNaN);
  EXPECT_TRUE(std::isnan(b.input("x").values[3]));
  EXPECT_THROW(b.set("x", {0, 2, 0}, 1), std::out_of_range);
  EXPECT_THROW(b.set("x", {0, 0}, 1), std::logic_error);
}

TEST(GoldenCaseBuilder, SignedUniformKeepsItsMagnitudesAndSigns) {
  CaseBuilder b("op", InputClass::overflow, DType::float32);
  b.add("c", {});
  b.last().inputs["x"] = make_constant(DType::float32, {4, 64}, 0);
  b.signed_uniform("x", 1e30, 2e30, rows(1, 3));
  int negative = 0;
  for (size_t k = 0; k < 256; ++k) {
    const double v = b.input("x").values[k];
    if (k < 64 || k >= 192) {
      EXPECT_EQ(v, 0.0);
    } else {
      EXPECT_GE(std::fabs(v), 1e30);
      EXPECT_LE(std::fabs(v), 2e30);
      negative += v < 0;
    }
  }
  EXPECT_GT(negative, 0);
  EXPECT_LT(negative, 128);
  b.signed_uniform("x", 1, 2, row(0), Sign::negative);
  for (size_t k = 0; k < 64; ++k) EXPECT_LT(b.input("x").values[k], 0);
}

void one(CaseBuilder& b) { b.add("one", {}); }
void two(CaseBuilder& b) {
  b.add("one", {});
  b.add("two", {});
}
void none(CaseBuilder&) {}

TEST(GoldenCaseBuilder, BuildClassCallsTheBuildersClassOnly) {
  for (InputClass c : all_input_classes()) {
    CaseBuilder b("op", c, DType::float32);
    build_class<CaseBuilder>(b, {one, two, none, none, one});
    const size_t want = c == InputClass::boundary ? 2 : c == InputClass::normal || c == InputClass::shape ? 1 : 0;
    EXPECT_EQ(b.take().size(), want) << c;
  }
}

}  // namespace
}  // namespace npukit::golden
