// tools/quantize/layer_report.h (npukit quant-report --layer): the layer file's parsing and
// one-line refusals, the ranking, the sensitive flag, the reports; and the default threshold
// against the gate's tolerance policy it is derived from (golden/tolerance.h).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden/tolerance.h"
#include "tools/quantize/layer_report.h"

namespace npukit::quant {
namespace {

// tools/quantize restates the gate's float16 rtol instead of linking golden code: the two agree.
TEST(LayerReport, DefaultThresholdIsTheGatesFloat16RtolSquared) {
  EXPECT_EQ(golden::default_tolerance(DType::float16, false).rtol, kGateFloat16Rtol);
  EXPECT_EQ(golden::default_tolerance(DType::float16, true).rtol, kGateFloat16Rtol);
  EXPECT_EQ(kDefaultSensitiveNmse, kGateFloat16Rtol * kGateFloat16Rtol);
  EXPECT_DOUBLE_EQ(kDefaultSensitiveNmse, 1e-6);
}

TEST(LayerReport, ParsesEntriesAndResolvesPathsAgainstTheFile) {
  const std::vector<LayerEntry> e = parse_layer(R"({"ops": [
      {"name": "q_proj", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "sub/wq.npy"}},
      {"name": "down", "op": "int8_gemm", "in": {"a": "/abs/x.npy"}, "weights": {"w": "w.npy"},
       "calibration": {"a": "cal.npy"}, "method": "percentile:99.9", "mode": "symmetric"}]})",
                                                "models/l0/layer.json");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].key, "ops[0]");
  EXPECT_EQ(e[0].name, "q_proj");
  EXPECT_EQ(e[0].op, "int8_gemm");
  EXPECT_EQ(e[0].a, "models/l0/x.npy");
  EXPECT_EQ(e[0].w, "models/l0/sub/wq.npy");
  EXPECT_EQ(e[0].calibration, "");
  EXPECT_EQ(e[0].method.method, Method::minmax);
  EXPECT_FALSE(e[0].symmetric);
  EXPECT_EQ(e[1].a, "/abs/x.npy");
  EXPECT_EQ(e[1].calibration, "models/l0/cal.npy");
  EXPECT_EQ(e[1].method.method, Method::percentile);
  EXPECT_EQ(e[1].method.percentile, 99.9);
  EXPECT_TRUE(e[1].symmetric);
  EXPECT_FALSE(e[0].calibration_keys);
  EXPECT_TRUE(e[1].calibration_keys);
  EXPECT_EQ(e[0].scheme, "");
  EXPECT_EQ(e[0].activations, "");
  const LayerEntry int4 = parse_layer(R"({"ops": [{"name": "a", "op": "int4_gemm", "in": {"a": "x.npy"},
      "weights": {"w": "w.npy"}, "scheme": "int4-group:128,asymmetric", "activations": "float32"}]})", "l.json")[0];
  EXPECT_EQ(int4.scheme, "int4-group:128,asymmetric");
  EXPECT_EQ(int4.activations, "float32");
  EXPECT_FALSE(int4.calibration_keys);
  // A file in the working directory: paths stay as written.
  EXPECT_EQ(parse_layer(R"({"ops": [{"name": "a", "op": "x", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}}]})",
                        "layer.json")[0].a,
            "x.npy");
}

std::string refusal(const std::string& text) {
  try {
    parse_layer(text, "layer.json");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(LayerReport, RefusalsNameTheFileTheKeyAndTheRule) {
  const std::string op0 = R"({"name": "a", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}})";
  struct Case {
    std::string text, starts;
  };
  const std::vector<Case> cases = {
      {"{\"ops\": [", "layer.json: not JSON: "},
      {"[1, 2]", "layer.json: the top level is an array: must be an object"},
      {"{}", "layer.json: ops: missing"},
      {R"({"ops": [], "model": "x"})", "layer.json: model: unknown key"},
      {R"({"ops": {}})", "layer.json: ops: an object: must be an array"},
      {R"({"ops": []})", "layer.json: ops: empty"},
      {R"({"ops": [)" + op0 + R"(, 3]})", "layer.json: ops[1]: a number: each op is an object"},
      {R"({"ops": [{"op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}}]})", "layer.json: ops[0].name: missing"},
      {R"({"ops": [{"name": 7, "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}}]})",
       "layer.json: ops[0].name: a number: must be a non-empty string"},
      {R"({"ops": [{"name": "a", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}}]})", "layer.json: ops[0].op: missing"},
      {R"({"ops": [)" + op0 + R"(, )" + op0 + R"(, {"name": "c", "op": "int8_gemm", "in": {"a": "x.npy"}}]})",
       "layer.json: ops[1].name: 'a' is also ops[0]'s name"},
      {R"({"ops": [)" + op0 + R"(, {"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {}}]})",
       "layer.json: ops[1].weights.w: missing"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}}]})", "layer.json: ops[0].weights.w: missing"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": "x.npy", "weights": {"w": "w.npy"}}]})",
       "layer.json: ops[0].in: a string: must be an object {\"a\": \"FILE.npy\"}"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy", "b": "y.npy"}, "weights": {"w": "w.npy"}}]})",
       "layer.json: ops[0].in.b: unknown tensor"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": ""}, "weights": {"w": "w.npy"}}]})",
       "layer.json: ops[0].in.a: an empty string: must be a file path"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "calibration": {"x": "c.npy"}}]})",
       "layer.json: ops[0].calibration.x: unknown tensor"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "scheme": "int4"}]})",
       "layer.json: ops[0].scheme: int4: must be int8-per-channel or int4-group"},
      {R"({"ops": [{"name": "b", "op": "int4_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "scheme": "int4-group:64,signed"}]})",
       "layer.json: ops[0].scheme: int4-group:64,signed: the mode after ','"},
      {R"({"ops": [{"name": "b", "op": "int4_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "activations": 8}]})",
       "layer.json: ops[0].activations: a number: must be a non-empty string"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "bits": 4}]})",
       "layer.json: ops[0].bits: unknown key"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "mode": "signed"}]})",
       "layer.json: ops[0].mode: 'signed': must be asymmetric or symmetric"},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "method": "max"}]})",
       "layer.json: ops[0].method: "},
      {R"({"ops": [{"name": "b", "op": "int8_gemm", "in": {"a": "x.npy"}, "weights": {"w": "w.npy"}, "method": "percentile:40"}]})",
       "layer.json: ops[0].method: "},
  };
  for (const Case& c : cases) {
    const std::string got = refusal(c.text);
    EXPECT_EQ(got.rfind(c.starts, 0), 0u) << c.text << "\n  gave: " << got;
    EXPECT_EQ(got.find('\n'), std::string::npos) << got;
  }
  // percentile:40 is refused above because asymmetric clipping below 50 is inverted; symmetric takes it.
  EXPECT_EQ(refusal(R"({"ops": [{"name": "b", "op": "o", "in": {"a": "x"}, "weights": {"w": "w"}, "method": "percentile:40", "mode": "symmetric"}]})"),
            "(accepted)");
}

TEST(LayerReport, UnreadableFileIsARefusal) {
  try {
    read_layer("/nonexistent/layer.json");
    FAIL() << "accepted a missing file";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/layer.json: cannot open for reading", 0), 0u) << e.what();
  }
}

TEST(LayerReport, RanksWorstFirstTiesInOrderNanFirst) {
  EXPECT_EQ(rank_by_nmse({1e-4, 3e-2, 1e-6, 3e-2}), (std::vector<size_t>{1, 3, 0, 2}));
  EXPECT_EQ(rank_by_nmse({1e-4, std::nan(""), HUGE_VAL}), (std::vector<size_t>{1, 2, 0}));
  EXPECT_TRUE(rank_by_nmse({}).empty());
}

TEST(LayerReport, SensitiveIsAboveTheThreshold) {
  EXPECT_FALSE(is_sensitive(1e-6, 1e-6));
  EXPECT_TRUE(is_sensitive(std::nextafter(1e-6, 1.0), 1e-6));
  EXPECT_FALSE(is_sensitive(0, 0));
  EXPECT_TRUE(is_sensitive(std::nan(""), 1));
}

OpReport report(const std::string& name, double nmse, double weight_share) {
  OpReport r;
  r.name = name;
  r.op = "int8_gemm";
  r.target = "cpu";
  r.M = 2;
  r.N = 3;
  r.K = 4;
  r.stages.both.nmse = nmse;
  r.stages.both.cosine = 1 - nmse / 2;
  r.stages.weight_share = weight_share;
  r.stages.activation_share = 1 - weight_share;
  return r;
}

TEST(LayerReport, LayerTextRanksAndNamesTheSensitiveOps) {
  const std::vector<OpReport> rs = {report("q_proj", 2e-5, 0.5), report("down_proj", 4e-2, 0.01),
                                    report("k_proj", 1e-5, 0.5), report("o_proj", 3e-4, 0.25)};
  const std::string t = format_layer_text("layer.json", rs, 1e-4, true);
  const size_t down = t.find("down_proj"), o = t.find("o_proj"), q = t.find("q_proj"), k = t.find("k_proj");
  ASSERT_NE(down, std::string::npos);
  EXPECT_LT(down, o);
  EXPECT_LT(o, q);
  EXPECT_LT(q, k);
  EXPECT_NE(t.find("sensitive above nmse 1.000000e-04 (--threshold)"), std::string::npos) << t;
  EXPECT_NE(t.find("keep in fp16: down_proj, o_proj\n"), std::string::npos) << t;
  size_t flags = 0;
  for (size_t at = t.find("SENSITIVE"); at != std::string::npos; at = t.find("SENSITIVE", at + 1)) ++flags;
  EXPECT_EQ(flags, 2u) << t;
  const std::string none = format_layer_text("layer.json", rs, 1, false);
  EXPECT_NE(none.find("keep in fp16: none"), std::string::npos) << none;
  EXPECT_NE(none.find("default: the gate's float16 rtol"), std::string::npos) << none;
}

TEST(LayerReport, PerTokenAndFloatActivationsHaveNoCalibration) {
  OpReport r = report("", 1e-3, 0.9);
  r.op = "int4_gemm";
  r.scheme = "int4-group:64,asymmetric";
  r.activations = "int8-per-token";
  r.x_nmse = 2.5e-5;
  r.args = "--param group=64";
  const std::string t = format_text(r);
  EXPECT_NE(t.find("int4_gemm [M=2, N=3, K=4] on cpu: weights  as int4-group:64,asymmetric, activations  as int8-per-token\n"),
            std::string::npos) << t;
  EXPECT_NE(t.find("a scale per row at run time, max |x| / 127 (no calibration; x's nmse 2.500000e-05)"), std::string::npos)
      << t;
  EXPECT_NE(t.find("  --param group=64\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("calibrated"), std::string::npos) << t;
  const nlohmann::json j = to_json(r);
  EXPECT_EQ(j["activations"]["scheme"], "int8-per-token");
  EXPECT_EQ(j["activations"]["nmse"], 2.5e-5);
  EXPECT_FALSE(j["activations"].contains("calibration"));
  EXPECT_EQ(j["args"], "--param group=64");
  r.activations = "float32";
  EXPECT_NE(format_text(r).find("not quantized"), std::string::npos);
}

TEST(LayerReport, LayerJsonRanksAndListsTheSensitiveOps) {
  const std::vector<OpReport> rs = {report("a", 1e-5, 0.5), report("b", 1e-2, 0.5), report("c", 1e-3, 0.5)};
  const nlohmann::json j = layer_json("layer.json", rs, 1e-3, false);
  ASSERT_EQ(j["ops"].size(), 3u);
  EXPECT_EQ(j["ops"][0]["name"], "b");
  EXPECT_EQ(j["ops"][0]["rank"], 1);
  EXPECT_EQ(j["ops"][1]["name"], "c");
  EXPECT_EQ(j["ops"][2]["name"], "a");
  EXPECT_EQ(j["ops"][0]["sensitive"], true);
  EXPECT_EQ(j["ops"][1]["sensitive"], false);  // 1e-3 is not above 1e-3
  EXPECT_EQ(j["sensitive"], nlohmann::json::array({"b"}));
  EXPECT_EQ(j["threshold"], 1e-3);
  EXPECT_EQ(j["ops"][0]["output_error"]["nmse"], 1e-2);
}

}  // namespace
}  // namespace npukit::quant
