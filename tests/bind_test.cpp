// Validation from the registry entry: every bad input is an error that names the
// argument, the value and the rule.
#include <gtest/gtest.h>

#include <vector>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "runtime/text.h"

namespace npukit {
namespace {

struct Tensors {
  std::vector<float> x = std::vector<float>(3 * 8, 1.0f), w = std::vector<float>(8, 1.0f),
                     y = std::vector<float>(3 * 8, 0.0f);
  TensorMap views() {
    return {{"x", {x.data(), DType::float32, {3, 8}, {}}},
            {"weight", {w.data(), DType::float32, {8}, {}}},
            {"y", {y.data(), DType::float32, {3, 8}, {}}}};
  }
};

// The message of the Error that `fn` throws, checked for its code.
template <class Fn>
std::string error_of(Fn fn, Errc code = Errc::invalid_argument) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no error thrown";
  return "";
}

const OpSpec& op() { return find_op("rms_norm"); }

TEST(Bind, AcceptsAValidCallAndBindsDims) {
  Tensors t;
  Call c = bind_call(op(), "cpu", t.views(), {{"eps", "1e-6"}});
  EXPECT_EQ(c.dim("rows"), 3);
  EXPECT_EQ(c.dim("hidden"), 8);
  EXPECT_DOUBLE_EQ(c.params.real("eps"), 1e-6);
  EXPECT_EQ(c.tier, "");
  EXPECT_EQ(bind_call(op(), "cpu:avx2", t.views(), {}).tier, "avx2");
}

TEST(Bind, InfersOutputs) {
  Tensors t;
  auto v = t.views();
  v.erase("y");
  auto out = infer_outputs(op(), v, {});
  ASSERT_EQ(out.count("y"), 1u);
  EXPECT_EQ(out["y"].shape, (std::vector<int64_t>{3, 8}));
  EXPECT_EQ(out["y"].dtype, DType::float32);
}

TEST(Bind, ErrorsNameArgumentValueAndRule) {
  Tensors t;
  auto v = t.views();
  v["weight"].shape = {7};
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", v, {}); }),
            "rms_norm: tensor weight: dimension hidden = 7 but tensor x has hidden = 8; they must be equal");

  v = t.views();
  v["x"].shape = {24};
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, {}); }).find("has rank 1; expected rank 2 (rows, hidden)"), std::string::npos);

  v = t.views();
  v["weight"].dtype = DType::float16;
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, {}); }).find("tensor weight has dtype float16 but must match x (float32)"), std::string::npos);

  v = t.views();
  v["x"].dtype = DType::int8;
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, {}); }).find("dtype int8 is not supported (allowed: float32, float16)"), std::string::npos);

  v = t.views();
  v["y"].shape = {2, 8};  // an output's dims are checked against the input that set them
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", v, {}); }),
            "rms_norm: tensor y: dimension rows = 2 but tensor x has rows = 3; they must be equal");

  v = t.views();
  v["x"].data = nullptr;
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", v, {}); }), "rms_norm: tensor x: data pointer is null");

  v = t.views();
  v["x"].strides = {1, 3};
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, {}); }).find("not C-contiguous"), std::string::npos);

  // Found by tests/fuzz/c_api_fuzz.cpp: strides over dims whose product wraps int64 were
  // checked with a signed overflow (UBSan) before the dims' ranges.
  v = t.views();
  v["x"].shape = {int64_t(1) << 31, (int64_t(1) << 32) + 1};
  v["x"].strides = {(int64_t(1) << 32) + 1, 1};
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", v, {}); }),
            "rms_norm: tensor x: dimension rows = 2147483648 must be in [1, 2147483647]");
  v["x"].strides = {3, 1};
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, {}); }).find("not C-contiguous"), std::string::npos);

  // Found by tests/fuzz/c_api_fuzz.cpp (UBSan): a misaligned pointer was read as its dtype.
  v = t.views();
  v["x"].data = reinterpret_cast<char*>(t.x.data()) + 2;
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", v, {}); }),
            "rms_norm: tensor x: data (with its byte offset) is not a multiple of 4 bytes, the alignment of its "
            "dtype float32");

  v = t.views();
  v["y"].data = t.x.data();
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, {}); }).find("output y overlaps input x"), std::string::npos);

  v = t.views();
  v["x"].shape = {0, 8};
  v["y"].shape = {0, 8};
  EXPECT_NE(error_of([&] { bind_call(op(), "cpu", v, {}); }).find("dimension rows = 0 must be in [1, "), std::string::npos);
}

TEST(Bind, ParametersAreChecked) {
  Tensors t;
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", t.views(), {{"eps", "-1"}}); }),
            "rms_norm: parameter eps=-1: must be in [0, 1]");
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", t.views(), {{"eps", "abc"}}); }),
            "rms_norm: parameter eps=abc: not a number");
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", t.views(), {{"eps", "nan"}}); }),
            "rms_norm: parameter eps=nan: must be finite");
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", t.views(), {{"epsilon", "1"}}); }),
            "rms_norm: unknown parameter 'epsilon' (it takes: eps)");
}

TEST(Bind, TensorsAndTargetsAreChecked) {
  Tensors t;
  auto v = t.views();
  v["bias"] = v["weight"];
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", v, {}); }),
            "rms_norm: unknown tensor 'bias' (it takes: x, weight, y)");
  v = t.views();
  v.erase("weight");
  EXPECT_EQ(error_of([&] { bind_call(op(), "cpu", v, {}); }), "rms_norm: missing input tensor 'weight'");
  EXPECT_NE(error_of([&] { bind_call(op(), "tpu", t.views(), {}); }, Errc::unsupported).find("no kernel for target 'tpu'"),
            std::string::npos);
  Call c = bind_call(op(), "cpu:avx9000", t.views(), {});
  EXPECT_NE(error_of([&] { run_call(c); }, Errc::unsupported).find("'avx9000' is not a CPU tier (sse41, avx2, avx512"),
            std::string::npos);
  // The known ops are the registry's, in its order: adding an op changes no test here.
  const std::string known = join_names(all_ops(), [](const OpSpec* o) { return o->name; });
  EXPECT_EQ(error_of([&] { find_op("softmax"); }), "unknown op 'softmax' (known: " + known + ")");
}

}  // namespace
}  // namespace npukit
