#include "schedules/npu/jit_run.h"

#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/halide_call.h"

namespace npukit::schedules::npu {

sim::ArchSpec call_arch(const Call& call) {
  try {
    return sim::resolve_arch(call.arch);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, std::string("target npu-sim:") + call.arch + ": " + e.what());
  }
}

namespace {

Halide::Buffer<> jit_buffer(const TensorView& t) {
  HalideBuffer hb(t);
  return Halide::Buffer<>(Halide::Runtime::Buffer<>(*hb.get()));
}

template <class Map>
const typename Map::mapped_type& need(const Map& m, const std::string& name, const std::string& op) {
  auto it = m.find(name);
  if (it == m.end()) throw std::logic_error(op + " NPU pipeline: no value for '" + name + "'");
  return it->second;
}

// These pipelines run on the host only to check an NPU schedule's arithmetic (its time is
// the cost model's), so their compile time is what a gate or a test waits for: LLVM's loop
// strength reduction and its DAG instruction selection were a quarter of each compile, and
// without them the npu-sim gates take 10-20% less time. HL_LLVM_ARGS is read once, when
// Halide first initializes LLVM (its first JIT compile); a user's own setting is kept.
void prefer_fast_compiles() {
  static std::once_flag once;
  std::call_once(once, [] { setenv("HL_LLVM_ARGS", "-disable-lsr -fast-isel", /*overwrite=*/0); });
}

}  // namespace

void jit_realize(NpuPipeline& p, const JitArgs& args, const Call& call, const TensorMap& outs) {
  static std::mutex mutex;  // the first realize JIT-compiles the shared pipeline
  std::lock_guard<std::mutex> lock(mutex);
  prefer_fast_compiles();
  Halide::ParamMap pm;
  std::vector<Halide::Buffer<>> keep;
  keep.reserve(p.inputs.size());
  for (const Halide::ImageParam& in : p.inputs) {
    keep.push_back(jit_buffer(need(args.inputs, in.name(), p.op)));
    pm.set(in, keep.back());
  }
  for (const Halide::Param<int32_t>& i : p.ints) pm.set(i, static_cast<int32_t>(need(args.ints, i.name(), p.op)));
  for (const Halide::Param<float>& f : p.floats) pm.set(f, static_cast<float>(need(args.floats, f.name(), p.op)));
  const Halide::Target target(halide_cpu_target(cpu_features()));
  std::vector<Halide::Buffer<>> ys;
  for (const NpuPipeline::Output& o : p.outputs) {
    auto it = outs.find(o.tensor);
    ys.push_back(jit_buffer(it != outs.end() ? it->second : call.tensor(o.tensor)));
  }
  try {  // libHalide is built with exceptions: JIT errors arrive as Halide::RuntimeError
    p.pipeline.realize(Halide::Realization(ys), target, pm);
  } catch (const std::exception& e) {
    fail(Errc::kernel_failed, p.op + " on npu-sim: " + e.what());
  }
}

}  // namespace npukit::schedules::npu
