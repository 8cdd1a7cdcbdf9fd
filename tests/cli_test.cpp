// The command line's error paths: a one-line message naming the culprit, and exit 2.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "golden/input_class.h"
#include "runtime/registry.h"
#include "runtime/text.h"
#include "tools/npy.h"

namespace npukit {
namespace {

struct Result {
  int code;
  std::string out;
};

Result npukit_cli(const std::string& args) {
  const std::string cmd = std::string(NPUKIT_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  Result r{-1, ""};
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class Cli : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(testing::TempDir()) / ("npukit_cli_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    write("x.npy", DType::float32, {4, 8});
    write("w.npy", DType::float32, {8});
    write("w7.npy", DType::float32, {7});
    write("xi.npy", DType::int32, {4, 8});
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void write(const std::string& name, DType dtype, std::vector<int64_t> shape) {
    npy::NpyArray a;
    a.dtype = dtype;
    a.shape = shape;
    a.bytes.assign(a.size() * dtype_size(dtype), 0);
    for (size_t i = 0; i < a.bytes.size(); i += 4) a.bytes[i + 3] = 0x3f;  // 0.5f, or a big int
    npy::write(path(name), a);
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string run_args(const std::string& x, const std::string& w, const std::string& extra = "") const {
    return "run --op rms_norm --in x=" + path(x) + " --in weight=" + path(w) + " --out y=" + path("y.npy") + " " + extra;
  }

  std::filesystem::path dir_;
};

// One line, exit 2, and the line contains `what`.
void expect_usage_error(const Result& r, const std::string& what) {
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(what), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
}

TEST_F(Cli, RunWritesTheOutput) {
  const Result r = npukit_cli(run_args("x.npy", "w.npy", "--param eps=1e-5"));
  ASSERT_EQ(r.code, 0) << r.out;
  const npy::NpyArray y = npy::read(path("y.npy"));
  EXPECT_EQ(y.shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(y.dtype, DType::float32);
}

TEST_F(Cli, RunErrorsNameTheCulprit) {
  expect_usage_error(npukit_cli("run --op softmax --in x=" + path("x.npy") + " --out y=" + path("y.npy")),
                     "unknown op 'softmax' (known: " + join_names(all_ops(), [](const OpSpec* o) { return o->name; }) + ")");
  expect_usage_error(npukit_cli(run_args("nope.npy", "w.npy")), "nope.npy: no such file");
  expect_usage_error(npukit_cli(run_args("xi.npy", "w.npy")), "tensor x: dtype int32 is not supported (allowed: float32, float16)");
  expect_usage_error(npukit_cli(run_args("x.npy", "w7.npy")), "tensor weight: dimension hidden = 7 but tensor x has hidden = 8");
  expect_usage_error(npukit_cli(run_args("x.npy", "w.npy", "--param epsilon=1")), "unknown parameter 'epsilon' (it takes: eps)");
  expect_usage_error(npukit_cli(run_args("x.npy", "w.npy", "--param eps=2")), "parameter eps=2: must be in [0, 1]");
  expect_usage_error(npukit_cli(run_args("x.npy", "w.npy", "--param eps")), "--param eps: expected NAME=VALUE");
  expect_usage_error(npukit_cli(run_args("x.npy", "w.npy", "--in bias=" + path("w.npy"))), "rms_norm has no input 'bias'");
  expect_usage_error(npukit_cli("run --op rms_norm --in x=" + path("x.npy") + " --in weight=" + path("w.npy")),
                     "missing --out y=FILE.npy");
  expect_usage_error(npukit_cli(run_args("x.npy", "w.npy", "--target tpu")), "no kernel for target 'tpu'");
  expect_usage_error(npukit_cli("run --op rms_norm --in x=" + path("x.npy") + " --out y=" + path("y.npy")),
                     "missing input tensor 'weight'");
}

// gpu-cuda on a machine without the CUDA driver: exit 2 and a line saying no CUDA device
// was found. Where a driver is installed the same call must run.
TEST_F(Cli, GpuCudaWithoutADeviceIsUnsupported) {
  const Result r = npukit_cli(run_args("x.npy", "w.npy", "--target gpu-cuda"));
  if (void* cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    dlclose(cuda);
    EXPECT_EQ(r.code, 0) << r.out;
  } else {
    expect_usage_error(r, "no CUDA device was found");
  }
}

TEST_F(Cli, RopeErrorsNameTheCulprit) {
  write("q.npy", DType::float32, {4, 2, 8});
  npy::NpyArray p;
  p.dtype = DType::int32;
  p.shape = {4};
  p.bytes.assign(16, 0);
  p.bytes[4] = 0xff;  // positions[1] = 255
  npy::write(path("p.npy"), p);
  p.shape = {3};
  p.bytes.resize(12);
  npy::write(path("p3.npy"), p);
  const std::string base = "run --op rope --in x=" + path("q.npy") + " --out y=" + path("y.npy") + " ";
  ASSERT_EQ(npukit_cli(base + "--in positions=" + path("p.npy") + " --param style=interleaved").code, 0);
  expect_usage_error(npukit_cli(base + "--in positions=" + path("p.npy") + " --param rotary_dim=3"),
                     "rope: parameter rotary_dim=3: must be even");
  expect_usage_error(npukit_cli(base + "--in positions=" + path("p.npy") + " --param max_position=100"),
                     "rope: positions[1] = 255: must be in [0, max_position = 100)");
  expect_usage_error(npukit_cli(base + "--in positions=" + path("p3.npy")),
                     "tensor positions: dimension tokens = 3 but tensor x has tokens = 4");
  expect_usage_error(npukit_cli(base + "--in positions=" + path("x.npy")),
                     "tensor positions: dtype float32 is not supported (allowed: int32)");
}

TEST_F(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(npukit_cli("").code, 2);
  EXPECT_EQ(npukit_cli("frobnicate").code, 2);
  expect_usage_error(npukit_cli("gate --class weird"), "--class weird: unknown");
  expect_usage_error(npukit_cli("gate --op softmax"), "--op softmax: unknown");
  expect_usage_error(npukit_cli("gate --op rms_norm --baseline " + path("x.npy")), "not JSON");
}

// Found by tests/fuzz/cli_fuzz.cpp: a newline inside an argument was echoed into the
// error, which split it over two lines. What npukit prints is one line.
TEST_F(Cli, ArgumentsWithNewlinesKeepTheErrorOnOneLine) {
  const Result op = npukit_cli("run --op \"$(printf 'rms\\nnorm')\"");
  EXPECT_EQ(op.code, 2) << op.out;
  EXPECT_EQ(op.out.find('\n'), op.out.size() - 1) << op.out;
  EXPECT_NE(op.out.find("'rms?norm'"), std::string::npos) << op.out;
  const Result sub = npukit_cli("\"$(printf 'fro\\nb')\"");
  EXPECT_EQ(sub.out, "npukit: unknown subcommand 'fro?b' (subcommands: gate, run, list, sim, tune, decode, quantize, calibrate, quant-report, new-op)\n");
}

TEST_F(Cli, ListShowsOpsTargetsAndClasses) {
  const Result r = npukit_cli("list");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* s : {"cpu:avx2", "param eps = 1e-5", "float16"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
  // Every registered op and every input class, as the registry and golden's table name them.
  for (const OpSpec* op : all_ops()) EXPECT_NE(r.out.find("\n" + op->name + ": "), std::string::npos) << op->name;
  for (const std::string& c : golden::input_class_names()) EXPECT_NE(r.out.find(c), std::string::npos) << c;
}

}  // namespace
}  // namespace npukit
