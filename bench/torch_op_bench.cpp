// The PyTorch extension's call overhead: torch.ops.npukit.rms_norm on one [1, 4096] fp32 row
// through torch's dispatcher (as TorchScript and C++ callers reach it; Python adds its own
// argument parsing, bench/torch_call_bench.py), y allocated per call or given (out=), against
// the raw C ABI call it wraps (npukit_op_run_positional on a prepared op, y allocated once). Each iteration times a batch
// of C ABI calls, then a batch of torch calls, back to back; overhead_ns is the median
// difference per call: the stack, the prepared-op lookup, y's allocation and the DLTensors.
// c_api_ns and torch_ns are the batches' medians (the benchmark's time is their mean, which
// the odd preempted batch on a shared machine pulls up).
#include <ATen/core/Tensor.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/ones.h>
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdio>
#include <vector>

#include "bench/batch_timing.h"
#include "npukit/npukit.h"
#include "runtime/cpu_features.h"

namespace {

using npukit::bench::median_of;
using npukit::bench::ns_per_call;

constexpr int64_t kHidden = 4096;

// `call(x, w, y)` runs the torch op (y: a preallocated output, for the out= overload).
template <class TorchCall>
void against_c_api(benchmark::State& state, TorchCall&& call) {
  const at::Tensor x = at::ones({1, kHidden}), w = at::ones({kHidden}), y = at::empty({1, kHidden});
  int64_t xs[2] = {1, kHidden}, ws[1] = {kHidden};
  DLTensor dx{x.data_ptr(), {kDLCPU, 0}, 2, {kDLFloat, 32, 1}, xs, nullptr, 0}, dw = dx, dy = dx;
  dw.data = w.data_ptr(), dw.ndim = 1, dw.shape = ws, dy.data = y.data_ptr();
  const DLTensor* args[] = {&dx, &dw, &dy};
  const npukit_param eps[] = {{"eps", "1e-05"}};
  npukit_op* op = npukit_op_create("rms_norm", "cpu", eps, 1);
  const at::Tensor y_torch = at::empty({1, kHidden});
  constexpr int kBatch = 16;
  std::vector<double> raw, torch_ns, diff;
  bool ok = op != nullptr;
  for (auto _ : state) {
    const double r = ns_per_call(kBatch, [&] { ok = npukit_op_run_positional(op, args, 3) == NPUKIT_OK && ok; });
    const double t = ns_per_call(kBatch, [&] { benchmark::DoNotOptimize(call(x, w, y_torch)); });
    state.SetIterationTime(t * 1e-9);
    raw.push_back(r);
    torch_ns.push_back(t);
    diff.push_back(t - r);
  }
  if (!ok) state.SkipWithError(npukit_last_error());
  state.counters["c_api_ns"] = median_of(raw);
  state.counters["torch_ns"] = median_of(torch_ns);  // the medians; the reported time is a mean
  state.counters["overhead_ns"] = median_of(diff);
  npukit_op_destroy(op);
}

// y = torch.ops.npukit.rms_norm(x, w, 1e-5): y allocated per call.
void BM_torch_rms_norm(benchmark::State& state) {
  const auto op = c10::Dispatcher::singleton()
                      .findSchemaOrThrow("npukit::rms_norm", "")
                      .typed<at::Tensor(const at::Tensor&, const at::Tensor&, double)>();
  against_c_api(state, [&](const at::Tensor& x, const at::Tensor& w, const at::Tensor&) { return op.call(x, w, 1e-5); });
}
BENCHMARK(BM_torch_rms_norm)->UseManualTime()->Unit(benchmark::kMicrosecond);

// torch.ops.npukit.rms_norm(x, w, 1e-5, y=y): the out= overload, y reused.
void BM_torch_rms_norm_out(benchmark::State& state) {
  const auto op = c10::Dispatcher::singleton()
                      .findSchemaOrThrow("npukit::rms_norm", "out")
                      .typed<at::Tensor&(const at::Tensor&, const at::Tensor&, double, at::Tensor&)>();
  against_c_api(state, [&](const at::Tensor& x, const at::Tensor& w, const at::Tensor& y) {
    return op.call(x, w, 1e-5, const_cast<at::Tensor&>(y));
  });
}
BENCHMARK(BM_torch_rms_norm_out)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  if (!dlopen(NPUKIT_TORCH_LIBRARY, RTLD_NOW | RTLD_GLOBAL)) {  // as torch.ops.load_library does
    std::fprintf(stderr, "torch_op_bench: %s\n", dlerror());
    return 1;
  }
  // The CPU (this bench links the shared library, not the kit's core: no per-op tiers).
  benchmark::AddCustomContext("cpu", npukit::cpu_model());
  benchmark::AddCustomContext("cpu_features", npukit::describe(npukit::cpu_features()));
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
