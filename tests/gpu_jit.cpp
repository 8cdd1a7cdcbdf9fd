#include "tests/gpu_jit.h"

#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "runtime/cpu_features.h"

namespace npukit::gpu_test {

using namespace Halide;

namespace {

// PoCL compiles kernels with its own LLVM 15, which clashes with libHalide's LLVM 14 in one
// process unless PoCL binds to its own symbols first (HALIDE-NOTES). A fresh cache makes
// every run take the cold-compile path, the one that crashes when this is wrong.
bool load_pocl() {
  static const bool loaded = [] {
    static char dir[] = "/tmp/npukit_pocl_cache_XXXXXX";
    if (!mkdtemp(dir)) return false;
    setenv("POCL_CACHE_DIR", dir, 1);
    std::atexit([] { std::filesystem::remove_all(dir); });  // PoCL's binaries: megabytes a run
    return dlopen("libpocl.so.2", RTLD_NOW | RTLD_DEEPBIND | RTLD_GLOBAL) != nullptr;
  }();
  return loaded;
}

}  // namespace

Target opencl_target() {
  EXPECT_TRUE(load_pocl()) << "libpocl.so.2 not found: apt-get install -y pocl-opencl-icd ocl-icd-opencl-dev";
  return Target(halide_cpu_target(cpu_features())).with_feature(Target::OpenCL);
}

Target cuda_target(int capability) {
  const Target::Feature cap = capability >= 80 ? Target::CUDACapability80 : Target::CUDACapability61;
  return Target(halide_cpu_target(cpu_features())).with_feature(Target::CUDA).with_feature(cap);
}

void realize_all_on(Pipeline p, std::vector<Buffer<>> outs, const Target& target) {
  p.realize(Realization(outs), target);
  for (Buffer<>& b : outs) b.copy_to_host();
}

std::string generator_ptx(const std::string& name, const Target& target, const Params& params) {
  auto gen = Internal::GeneratorRegistry::create(name, GeneratorContext(target));
  Internal::GeneratorParamsMap map;
  for (const auto& [k, v] : params) map[k] = v;
  gen->set_generator_param_values(map);
  Module m = gen->build_module(name);
  // The CUDA kernels travel as one buffer of PTX text inside the host module.
  for (const Buffer<>& b : m.buffers()) {
    if (b.type() != UInt(8) && b.type() != Int(8)) continue;
    std::string text(reinterpret_cast<const char*>(b.data()), b.size_in_bytes());
    if (text.find(".target sm_") != std::string::npos) return text.substr(0, text.find('\0'));
  }
  return "";
}

std::string ptxas_errors(const std::string& ptx, const std::string& arch) {
  char path[] = "/tmp/npukit_ptx_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "mkstemp failed";
  close(fd);
  std::ofstream(path) << ptx;
  const std::string log = std::string(path) + ".log";
  const std::string cmd = "/usr/local/cuda/bin/ptxas -arch=" + arch + " -o /dev/null " + path + " > " + log + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::stringstream messages;
  messages << std::ifstream(log).rdbuf();
  std::remove(path);
  std::remove(log.c_str());
  if (rc == 0) return "";
  return "ptxas exit " + std::to_string(rc) + ": " + messages.str();
}

}  // namespace npukit::gpu_test
