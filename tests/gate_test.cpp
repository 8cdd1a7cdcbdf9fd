// The gate must be able to fail: doctored copies of the RMSNorm entry with wrong, sloppy,
// out-of-bounds and crashing kernels, each reported with the right status and exit code.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <limits>
#include <fstream>
#include <sstream>

#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "runtime/text.h"
#include "tools/gate/reports.h"
#include "tools/gate/result_json.h"
#include "tools/gate/summary.h"

namespace npukit {
namespace {

// rms_norm with its cpu kernel replaced by `kernel` (which may call the real one).
OpSpec doctored(std::function<void(const Call&)> kernel) {
  OpSpec op = find_op("rms_norm");
  op.kernels["cpu"] = std::move(kernel);
  return op;
}

void real_kernel(const Call& c) { find_op("rms_norm").kernels.at("cpu")(c); }

std::vector<gate::CaseResult> gate_run(const OpSpec& op, bool isolate = false,
                                       const std::string& cls = "normal") {
  gate::Options o;
  o.classes = {cls};
  o.dtypes = {"float32"};
  o.isolate = isolate;
  return gate::run({&op}, o);
}

TEST(Gate, RealKernelPasses) {
  const auto r = gate_run(find_op("rms_norm"));
  ASSERT_FALSE(r.empty());
  for (const auto& c : r) EXPECT_EQ(c.status, golden::Status::pass) << c.summary;
  EXPECT_EQ(gate::exit_code(r), 0);
}

TEST(Gate, WrongKernelFails) {
  // Off by 0.1% in one element: far inside what a casual eye accepts, far outside tolerance.
  const OpSpec op = doctored([](const Call& c) {
    real_kernel(c);
    static_cast<float*>(c.tensor("y").data)[c.tensor("y").numel() / 2] *= 1.001f;
  });
  const auto r = gate_run(op);
  ASSERT_FALSE(r.empty());
  for (const auto& c : r) {
    EXPECT_EQ(c.status, golden::Status::fail);
    EXPECT_FALSE(c.outputs.at(0).metrics.worst.empty());
    EXPECT_NE(c.repro.find("npukit gate --op rms_norm --target cpu --dtype float32 --class normal --case"), std::string::npos);
  }
  EXPECT_EQ(gate::exit_code(r), 1);
}

TEST(Gate, UnwrittenOutputFails) {
  const auto r = gate_run(doctored([](const Call&) {}));
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].status, golden::Status::fail);
  EXPECT_EQ(r[0].metric, "nan_inf_mismatches");  // outputs start as NaN, so nothing passes by luck
}

TEST(Gate, WriteOutsideTheTensorIsCorruption) {
  const auto r = gate_run(doctored([](const Call& c) {
    real_kernel(c);
    static_cast<float*>(c.tensor("y").data)[c.tensor("y").numel()] = 1.0f;
  }));
  ASSERT_FALSE(r.empty());
  EXPECT_TRUE(r[0].guard_corrupted);
  EXPECT_EQ(r[0].status, golden::Status::fail);
  EXPECT_EQ(gate::exit_code(r), 3);
}

TEST(Gate, WritingAnInputIsCaught) {
  const auto r = gate_run(doctored([](const Call& c) {
    real_kernel(c);
    static_cast<float*>(c.tensor("x").data)[0] += 1.0f;
  }));
  ASSERT_FALSE(r.empty());
  EXPECT_TRUE(r[0].guard_corrupted);
  EXPECT_NE(r[0].error.find("input x was modified"), std::string::npos);
}

// In/out tensors (qkv_attention's KV caches) are checked against the golden's updated
// copy: a kernel that leaves a cache as it was, or writes past its new rows, fails.
TEST(Gate, InOutTensorsAreCheckedAfterTheUpdate) {
  const OpSpec& real = find_op("qkv_attention");
  EXPECT_EQ(gate_run(real, false, "boundary").front().status, golden::Status::pass);
  OpSpec stale = real;
  stale.kernels["cpu"] = [&real](const Call& c) {
    const TensorView& k = c.tensor("k_cache");
    const size_t bytes = static_cast<size_t>(k.numel()) * dtype_size(k.dtype);
    std::vector<char> old(static_cast<const char*>(k.data), static_cast<const char*>(k.data) + bytes);
    real.kernels.at("cpu")(c);
    std::memcpy(k.data, old.data(), bytes);  // the new k rows never reach the cache
  };
  bool failed_on_k = false;
  for (const auto& r : gate_run(stale, false, "normal")) {
    failed_on_k = failed_on_k || (r.status == golden::Status::fail && r.summary.rfind("k_cache:", 0) == 0);
  }
  EXPECT_TRUE(failed_on_k);
  OpSpec overrun = real;
  overrun.kernels["cpu"] = [&real](const Call& c) {
    real.kernels.at("cpu")(c);
    const TensorView& v = c.tensor("v_cache");
    static_cast<char*>(v.data)[v.numel() * dtype_size(v.dtype)] ^= 1;  // one byte past the end
  };
  const auto r = gate_run(overrun, false, "normal");
  EXPECT_TRUE(r.front().guard_corrupted) << r.front().error;
  EXPECT_NE(r.front().error.find("in/out v_cache"), std::string::npos) << r.front().error;
}

// --repeat: every run must write the bytes of the first, on 1 and on 2 Halide threads.
TEST(Gate, RepeatedRunsMustAgreeBitForBit) {
  gate::Options o;
  o.classes = {"normal"};
  o.dtypes = {"float32"};
  o.isolate = false;
  o.repeat = 4;
  // Real kernels, including one that updates in/out tensors (each repeat gets the caches back).
  for (const OpSpec* op : {&find_op("rms_norm"), &find_op("qkv_attention")}) {
    const auto r = gate::run({op}, o);
    ASSERT_FALSE(r.empty());
    for (const auto& c : r) EXPECT_EQ(c.status, golden::Status::pass) << op->name << ": " << c.summary;
  }
  // A kernel whose last bit depends on how often it ran: correct within tolerance every
  // time, different on every second run.
  const OpSpec flaky = doctored([](const Call& c) {
    static int calls = 0;
    real_kernel(c);
    if (++calls % 2 == 0) {
      uint32_t bits;
      float* y = static_cast<float*>(c.tensor("y").data);
      std::memcpy(&bits, y, 4);
      bits ^= 1;
      std::memcpy(y, &bits, 4);
    }
  });
  const auto r = gate::run({&flaky}, o);
  ASSERT_FALSE(r.empty());
  for (const auto& c : r) {
    EXPECT_EQ(c.status, golden::Status::nondeterministic);
    EXPECT_EQ(c.summary, "run 2 of 4 (2 threads) differs from run 1 (1 thread) in y at element 0");
    EXPECT_NE(c.repro.find(" --repeat 4"), std::string::npos) << c.repro;
  }
  EXPECT_EQ(gate::exit_code(r), 1);
  EXPECT_EQ(golden::status_name(r.front().status), "NONDETERMINISTIC");
  // Without --repeat the same kernel passes: one run cannot see it.
  o.repeat = 1;
  for (const auto& c : gate::run({&flaky}, o)) EXPECT_EQ(c.status, golden::Status::pass);
}

TEST(Gate, CrashingKernelIsIsolatedAndReported) {
  const auto r = gate_run(doctored([](const Call&) { std::raise(SIGSEGV); }), /*isolate=*/true);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].status, golden::Status::crashed);
  EXPECT_NE(r[0].error.find("signal 11"), std::string::npos);
  EXPECT_EQ(gate::exit_code(r), 3);
}

// One child runs group after group; a crash takes down its own group only, and a fresh
// child reports the groups after it.
TEST(Gate, CrashInOneGroupLeavesTheOtherGroupsReported) {
  const OpSpec op = doctored([](const Call& c) {
    if (c.tensor("x").shape.front() == 17) std::raise(SIGSEGV);  // rows = 17: boundary cases only
    real_kernel(c);
  });
  gate::Options o;
  o.dtypes = {"float32"};
  o.classes = {"normal", "boundary", "shape"};
  const auto r = gate::run({&op}, o);
  ASSERT_FALSE(r.empty());
  int crashed = 0, passed_after = 0;
  bool seen_crash = false;
  for (const auto& c : r) {
    if (c.status == golden::Status::crashed) {
      ++crashed;
      seen_crash = true;
      EXPECT_EQ(c.input_class, "boundary");
      EXPECT_NE(c.error.find("signal 11"), std::string::npos) << c.error;
    } else if (seen_crash) {
      EXPECT_EQ(c.input_class, "shape");
      passed_after += c.status == golden::Status::pass;
    }
  }
  EXPECT_EQ(crashed, 1);
  EXPECT_GT(passed_after, 0);
  EXPECT_EQ(r.front().input_class, "normal");
  EXPECT_EQ(r.front().status, golden::Status::pass);
}

TEST(Gate, IsolatedResultsMatchInProcessOnes) {
  const auto a = gate_run(find_op("rms_norm"), true, "boundary");
  const auto b = gate_run(find_op("rms_norm"), false, "boundary");
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].status, b[i].status);
    EXPECT_EQ(a[i].outputs.at(0).metrics.max_abs, b[i].outputs.at(0).metrics.max_abs);
  }
}

TEST(Gate, KernelErrorIsAFailWithItsMessage) {
  const auto r = gate_run(doctored([](const Call&) { fail(Errc::kernel_failed, "CUDA API not found"); }));
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].status, golden::Status::fail);
  EXPECT_EQ(r[0].error, "CUDA API not found");
}

TEST(Gate, MostlyZeroCaseIsMistrusted) {
  OpSpec op = doctored([](const Call& c) {
    float* y = static_cast<float*>(c.tensor("y").data);
    for (int64_t i = 0; i < c.tensor("y").numel(); ++i) y[i] = 0.0f;
  });
  GateHooks hooks = *gate_hooks("rms_norm");
  hooks.reference = [](const golden::Case& c) {
    return std::map<std::string, std::vector<double>>{{"y", std::vector<double>(c.inputs.at("x").values.size(), 0.0)}};
  };
  gate::Options o;
  o.classes = {"normal"};
  o.dtypes = {"float32"};
  o.isolate = false;
  const auto r = gate::run({gate::GatedOp{&op, &hooks}}, o);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].status, golden::Status::mistrusted);
  EXPECT_EQ(gate::exit_code(r), 1);
}

// The gate finds an op's golden hooks by its name; an op it has none for is refused, not
// passed for having run nothing.
TEST(Gate, AnOpWithoutGateHooksIsRefused) {
  OpSpec op = find_op("rms_norm");
  op.name = "rms_norm_without_hooks";
  gate::Options o;
  o.classes = {"normal"};
  o.isolate = false;
  EXPECT_THROW(gate::run({&op}, o), Error);
}

// A golden reference that is a stub (npukit new-op's) fails every case with its message, in
// and out of the child processes, and the gate names the op as unchecked: never a pass.
TEST(Gate, AnUnwrittenGoldenIsReportedNotPassed) {
  const OpSpec& op = find_op("rms_norm");
  GateHooks hooks = *gate_hooks("rms_norm");
  hooks.reference = [](const golden::Case&) -> std::map<std::string, std::vector<double>> {
    throw golden::NotWritten("golden/rms_norm.h: rms_norm() is a stub");
  };
  for (bool isolate : {false, true}) {
    gate::Options o;
    o.classes = {"normal"};
    o.dtypes = {"float32"};
    o.isolate = isolate;
    const auto r = gate::run(std::vector<gate::GatedOp>{{&op, &hooks}}, o);
    ASSERT_FALSE(r.empty());
    for (const auto& c : r) {
      EXPECT_EQ(c.status, golden::Status::fail);
      EXPECT_EQ(c.metric, "golden");
      EXPECT_NE(c.error.find("rms_norm() is a stub"), std::string::npos) << c.error;
    }
    EXPECT_EQ(gate::exit_code(r), 1);
    const auto lines = gate::unwritten_goldens(r);
    ASSERT_EQ(lines.size(), 1u);
    EXPECT_EQ(lines[0], "op rms_norm: its golden reference is not written (golden/rms_norm.h: rms_norm() is a stub)");
  }
  EXPECT_TRUE(gate::unwritten_goldens(gate_run(op)).empty());
}

// The op of an operator plug-in is known to a rerun only with its --plugin.
TEST(Gate, ReproLinesCarryTheOpsPlugin) {
  const OpSpec op = doctored([](const Call&) {});
  gate::Options o;
  o.classes = {"normal"};
  o.dtypes = {"float32"};
  o.isolate = false;
  o.op_flags["rms_norm"] = "--plugin ./libnpukit_op_rms_norm.so";
  const auto r = gate::run({&op}, o);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].repro.rfind("npukit gate --plugin ./libnpukit_op_rms_norm.so --op rms_norm --target cpu ", 0), 0u)
      << r[0].repro;
}

TEST(Gate, UnknownTargetIsUnsupportedNotFailed) {
  gate::Options o;
  o.classes = {"normal"};
  o.targets = {"gpu-cuda"};
  o.isolate = false;
  const auto r = gate::run({&find_op("rms_norm")}, o);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r[0].status, golden::Status::unsupported);
  EXPECT_EQ(gate::exit_code(r), 0);
}

// Asked for by name, an (op, target) pair that ran no case is reported (the command exits
// 2 with it); a pair that ran, or an op not named (a gate over every op), is not.
TEST(Gate, ANamedOpWithNothingRunnableIsReported) {
  OpSpec no_kernel = find_op("rms_norm");
  no_kernel.kernels.erase("cpu");  // every case UNSUPPORTED on cpu
  gate::Options o;
  o.classes = {"normal"};
  o.dtypes = {"float32"};
  o.isolate = false;
  o.ops = {"rms_norm"};
  const auto r = gate::run({&no_kernel}, o);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(gate::exit_code(r), 0);  // no FAIL: the exit code alone would pass
  const std::vector<std::string> none = gate::unrunnable_requests(r, o);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].rfind("--op rms_norm --target cpu: no case ran (" + std::to_string(r.size()) + " UNSUPPORTED", 0), 0u)
      << none[0];
  EXPECT_EQ(none[0].find('\n'), std::string::npos) << none[0];

  // The real kernel runs on cpu; this test registers no npu-sim kernels: only that pair.
  o.targets = {"cpu", "npu-sim:edge-6tops"};
  const auto both = gate::run({&find_op("rms_norm")}, o);
  const std::vector<std::string> one = gate::unrunnable_requests(both, o);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].rfind("--op rms_norm --target npu-sim:edge-6tops: no case ran", 0), 0u) << one[0];

  // Every op: an op without a kernel here is UNSUPPORTED, not a failure, where another op
  // ran on the target.
  o.ops.clear();
  o.targets = {"cpu"};
  std::vector<gate::CaseResult> mixed = r;
  const auto ran = gate::run({&find_op("silu_mul")}, o);
  mixed.insert(mixed.end(), ran.begin(), ran.end());
  EXPECT_TRUE(gate::unrunnable_requests(mixed, o).empty());
  // Where no op ran on a target named with --target (no device), that target is reported.
  const std::vector<std::string> target = gate::unrunnable_requests(r, o);
  ASSERT_EQ(target.size(), 1u);
  EXPECT_EQ(target[0].rfind("--target cpu: no case of any op ran (" + std::to_string(r.size()) + " UNSUPPORTED", 0), 0u)
      << target[0];
}

// gpu-cuda without a GPU: a gate over every op that checked nothing does not pass (CI and
// bench/gpu/run_device.sh read the exit code).
TEST(Gate, ATargetOnWhichNothingRanIsReported) {
  gate::Options o;
  o.classes = {"normal"};
  o.dtypes = {"float32"};
  o.targets = {"gpu-cuda"};
  o.isolate = false;
  const auto r = gate::run(std::vector<const OpSpec*>{&find_op("rms_norm"), &find_op("silu_mul")}, o);
  ASSERT_FALSE(r.empty());
  const std::vector<std::string> lines = gate::unrunnable_requests(r, o);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].rfind("--target gpu-cuda: no case of any op ran", 0), 0u) << lines[0];
  EXPECT_NE(lines[0].find("no CUDA device"), std::string::npos) << lines[0];
}

TEST(Gate, BaselineCatchesARegressionInsideTolerance) {
  const auto before = gate_run(find_op("rms_norm"));
  const std::string path = testing::TempDir() + "/gate_baseline.json";
  std::ofstream(path) << gate::report_json(before).dump();
  // 1e-6 relative: still a PASS against the tolerance, but worse than the baseline.
  const OpSpec sloppy = doctored([](const Call& c) {
    real_kernel(c);
    float* y = static_cast<float*>(c.tensor("y").data);
    y[0] = y[0] * (1.0f + 1e-6f) + 1e-7f;
  });
  auto after = gate_run(sloppy);
  ASSERT_EQ(after[0].status, golden::Status::pass);
  EXPECT_EQ(gate::apply_baseline(after, path), static_cast<int>(after.size()));
  EXPECT_EQ(after[0].status, golden::Status::fail);
  EXPECT_EQ(after[0].metric, "baseline");

  auto same = gate_run(find_op("rms_norm"));
  EXPECT_EQ(gate::apply_baseline(same, path), 0);
  EXPECT_THROW(gate::apply_baseline(same, testing::TempDir() + "/missing.json"), Error);
}

TEST(Gate, JsonRoundTripsAndJunitHasOneSuitePerOp) {
  const auto r = gate_run(doctored([](const Call& c) {
    real_kernel(c);
    static_cast<float*>(c.tensor("y").data)[3] = 1e9f;
  }));
  const nlohmann::json j = gate::report_json(r);
  ASSERT_EQ(j["results"].size(), r.size());
  const auto back = gate::case_from_json(j["results"][0]);
  EXPECT_EQ(back.status, r[0].status);
  EXPECT_EQ(back.outputs[0].metrics.worst.size(), r[0].outputs[0].metrics.worst.size());
  EXPECT_LE(r[0].outputs[0].metrics.worst.size(), 10u);
  EXPECT_EQ(r[0].outputs[0].metrics.worst[0].index, 3);

  std::ostringstream xml;
  gate::write_junit(xml, r);
  EXPECT_NE(xml.str().find("<testsuite name=\"rms_norm\""), std::string::npos);
  EXPECT_NE(xml.str().find("<failure message=\"FAIL"), std::string::npos);
}

TEST(Gate, TheMatrixSumsEachCellAndKeepsItsWorstMetric) {
  const auto good = gate_run(find_op("rms_norm"));
  auto r = gate_run(doctored([](const Call& c) {
    real_kernel(c);
    static_cast<float*>(c.tensor("y").data)[0] *= 1.001f;
  }));
  for (auto& c : r) c.target = "doctored";
  r.insert(r.begin(), good.begin(), good.end());
  const gate::Matrix m = gate::summarize(r);
  ASSERT_EQ(m.rows.size(), 1u);
  EXPECT_EQ(m.targets, (std::vector<std::string>{"cpu", "doctored"}));
  const gate::CellSummary& bad = m.rows[0].by_target.at("doctored");
  EXPECT_EQ(bad.counts.at(golden::Status::fail), static_cast<int>(good.size()));
  EXPECT_EQ(bad.worst_status(), golden::Status::fail);
  EXPECT_GT(bad.fraction, 1);
  const gate::CellSummary& cpu = m.rows[0].by_target.at("cpu");
  EXPECT_TRUE(cpu.passed());
  EXPECT_LE(cpu.fraction, 1);
  EXPECT_EQ(m.rows[0].by_target_class.at("cpu").at("normal").total, cpu.total);

  std::ostringstream text, html;
  gate::print_matrix(text, r);
  gate::write_html(html, r);
  EXPECT_NE(text.str().find("PASS " + std::to_string(good.size())), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("\n    " + r.back().repro + "\n"), std::string::npos) << text.str();
  EXPECT_NE(html.str().find("data-target=\"doctored\" data-status=\"FAIL\""), std::string::npos);
  EXPECT_NE(html.str().find(xml_escape(r.back().repro)), std::string::npos);
}

TEST(Gate, LimitFractions) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(gate::limit_fraction({golden::Status::pass, "lsb", 0, 0, ""}), 0);
  EXPECT_EQ(gate::limit_fraction({golden::Status::fail, "lsb", 2, 0, ""}), inf);
  EXPECT_EQ(gate::limit_fraction({golden::Status::fail, "max_rel", std::nan(""), 1e-5, ""}), inf);
  EXPECT_DOUBLE_EQ(gate::limit_fraction({golden::Status::pass, "max_rel", 5e-6, 1e-5, ""}), 0.5);
}

}  // namespace
}  // namespace npukit
