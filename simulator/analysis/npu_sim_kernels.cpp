#include "simulator/analysis/npu_sim_kernels.h"

#include <mutex>

#include "runtime/cpu_features.h"
#include "runtime/error.h"
#include "runtime/halide_call.h"
#include "runtime/ops/int8_gemm_channels.h"
#include "runtime/registry.h"
#include "schedules/npu/int8_gemm.h"
#include "schedules/npu/rms_norm.h"
#include "simulator/analysis/op_simulation.h"

namespace npukit::sim {
namespace {

Halide::Buffer<> jit_buffer(const TensorView& t) {
  HalideBuffer hb(t);
  return Halide::Buffer<>(Halide::Runtime::Buffer<>(*hb.get()));
}

ArchSpec call_arch(const Call& call) {
  try {
    return resolve_arch(call.arch);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, std::string("target npu-sim:") + call.arch + ": " + e.what());
  }
}

// Runs the op's NPU pipeline on the call's tensors; Halide errors become npukit errors.
void realize(CompiledNpuOp& c, const Halide::ParamMap& params, const TensorView& out) {
  static std::mutex mutex;  // the first realize JIT-compiles the shared pipeline
  std::lock_guard<std::mutex> lock(mutex);
  const Halide::Target target(halide_cpu_target(cpu_features()));
  Halide::Buffer<> y = jit_buffer(out);
  try {  // libHalide is built with exceptions: JIT errors arrive as Halide::RuntimeError
    c.pipeline.pipeline.realize(Halide::Realization(y), target, params);
  } catch (const std::exception& e) {
    fail(Errc::kernel_failed, c.pipeline.op + " on npu-sim: " + e.what());
  }
}

void rms_norm_npu(const Call& call) {
  const ArchSpec arch = call_arch(call);
  const TensorView& x = call.tensor("x");
  const bool f32 = x.dtype == DType::float32;
  const int64_t rows = call.dim("rows"), hidden = call.dim("hidden");
  const schedules::npu::RowTiles t = schedules::npu::choose_row_tiles(arch, rows, hidden, f32 ? 4 : 2);
  auto c = compiled_npu_op("rms_norm", f32 ? "float32" : "float16", arch, t.double_buffer);
  Halide::ParamMap pm;
  pm.set(c->pipeline.inputs[0], jit_buffer(x));
  pm.set(c->pipeline.inputs[1], jit_buffer(call.tensor("weight")));
  pm.set(c->pipeline.int_param("tile_rows"), static_cast<int32_t>(t.rows));
  pm.set(c->pipeline.floats[0], static_cast<float>(call.params.real("eps")));
  realize(*c, pm, call.tensor("y"));
}

void int8_gemm_npu(const Call& call) {
  const ArchSpec arch = call_arch(call);
  const int64_t M = call.dim("M"), N = call.dim("N"), K = call.dim("K");
  const std::string out = call.params.choice("out");
  const std::string variant = out != "int8" ? out : call.params.choice("rounding") == "fixed_point" ? "int8" : "int8_float";
  const schedules::npu::GemmTiles t = schedules::npu::choose_gemm_tiles(arch, M, N, K, gemm_out(variant));
  auto c = compiled_npu_op("int8_gemm", variant, arch, t.double_buffer);
  Halide::ParamMap pm;
  std::vector<Halide::Buffer<>> keep;
  Int8ChannelFactors f;
  if (out != "int32") f = int8_channel_factors(call);
  for (const Halide::ImageParam& p : c->pipeline.inputs) {
    TensorView v;
    if (p.name() == "a" || p.name() == "w") {
      v = call.tensor(p.name());
    } else {
      void* data = p.name() == "multiplier" ? static_cast<void*>(f.multiplier.data())
                 : p.name() == "shift"      ? static_cast<void*>(f.shift.data())
                 : p.name() == "chan_scale" ? static_cast<void*>(f.chan_scale.data())
                                            : static_cast<void*>(f.bias.data());
      const bool is_int = p.name() == "multiplier" || p.name() == "shift";
      v = TensorView{data, is_int ? DType::int32 : DType::float32, {N}, {}};
    }
    keep.push_back(jit_buffer(v));
    pm.set(p, keep.back());
  }
  const std::pair<const char*, int64_t> values[] = {{"a_zero_point", call.params.integer("a_zero_point")},
                                                    {"tile_m", t.m},
                                                    {"tile_n", t.n},
                                                    {"tile_k", t.k},
                                                    {"out_zero_point", call.params.integer("out_zero_point")}};
  for (const auto& [name, value] : values) pm.set(c->pipeline.int_param(name), static_cast<int32_t>(value));
  realize(*c, pm, call.tensor("y"));
}

}  // namespace

void register_npu_sim_kernels() {
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> targets;
    for (const std::string& p : preset_names()) targets.push_back("npu-sim:" + p);
    register_kernel("rms_norm", "npu-sim", rms_norm_npu, targets);
    register_kernel("int8_gemm", "npu-sim", int8_gemm_npu, targets);
  });
}

}  // namespace npukit::sim
