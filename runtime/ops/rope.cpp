// The registry entry of RoPE.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "kernels/rope_half_f16.h"
#include "kernels/rope_half_f16_gpu.h"
#include "kernels/rope_half_f32.h"
#include "kernels/rope_half_f32_gpu.h"
#include "kernels/rope_half_rows_f16.h"
#include "kernels/rope_half_rows_f16_gpu.h"
#include "kernels/rope_half_rows_f32.h"
#include "kernels/rope_half_rows_f32_gpu.h"
#include "kernels/rope_interleaved_f16.h"
#include "kernels/rope_interleaved_f16_gpu.h"
#include "kernels/rope_interleaved_f32.h"
#include "kernels/rope_interleaved_f32_gpu.h"
#include "runtime/error.h"
#include "runtime/kernel_call.h"
#include "runtime/halide_call.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

// rotary_dim = 0 means the whole head.
int64_t rotary_dim_of(const Call& call) {
  const int64_t rd = call.params.integer("rotary_dim");
  return rd == 0 ? call.dim("head_dim") : rd;
}

void check(const Call& call) {
  const int64_t head_dim = call.dim("head_dim"), rd = rotary_dim_of(call);
  const std::string style = call.params.choice("style");
  if (rd % 2 != 0) {
    fail(Errc::invalid_argument, "rope: parameter rotary_dim={}: must be even (dims rotate in pairs)", rd);
  }
  if (rd > head_dim) {
    fail(Errc::invalid_argument, "rope: parameter rotary_dim={}: must be <= head_dim = {}", rd, head_dim);
  }
  if (style == "interleaved" && head_dim % 2 != 0) {
    fail(Errc::invalid_argument,
         "rope: head_dim = {} is odd; style=interleaved pairs (2i, 2i+1) across the whole row and needs an even "
         "head_dim (style=half takes any)",
         head_dim);
  }
  const int64_t max_position = call.params.integer("max_position");
  const TensorView& p = call.tensor("positions");
  // Positions in CUDA memory are not range-checked: that would cost a device-to-host copy
  // and a sync per call. An out-of-range position only gives that position's rotation; no
  // access depends on it.
  if (p.memory == TensorView::Memory::cuda) return;
  const auto* pos = static_cast<const int32_t*>(p.data);
  for (int64_t t = 0; t < p.numel(); ++t) {
    if (pos[t] < 0 || pos[t] >= max_position) {
      fail(Errc::invalid_argument, "rope: positions[{}] = {}: must be in [0, max_position = {})", t, pos[t],
           max_position);
    }
  }
}

template <class Kernel>
void run_rotary(const Kernel& kernel, const Call& call) {
  call_kernel(kernel, call, In{call.tensor("x")}, In{call.tensor("positions")}, call.params.real("theta"),
              static_cast<int32_t>(rotary_dim_of(call)), Out{call.tensor("y")});
}

// The half style over whole rows (rotary_dim = head_dim, as Hugging Face Llama has it):
// each row viewed as [2, head_dim/2], so both halves are dense vectors.
template <class Kernel>
void run_half_rows(const Kernel& kernel, const Call& call) {
  const int64_t tokens = call.dim("tokens"), heads = call.dim("heads"), half = call.dim("head_dim") / 2;
  auto rows = [&](const TensorView& v) { return TensorView{v.data, v.dtype, {tokens, heads, 2, half}, {}, v.memory}; };
  call_kernel(kernel, call, In{rows(call.tensor("x"))}, In{call.tensor("positions")}, call.params.real("theta"),
              Out{rows(call.tensor("y"))});
}

template <bool Gpu>
void rope_run(const Call& call) {
  const bool half = call.params.choice("style") == "half";
  const bool f16 = call.tensor("x").dtype == DType::float16;
  if (half && rotary_dim_of(call) == call.dim("head_dim")) {  // check() made it even
    f16 ? run_half_rows(NPUKIT_TABLE(Gpu, rope_half_rows_f16), call)
        : run_half_rows(NPUKIT_TABLE(Gpu, rope_half_rows_f32), call);
  } else if (half) {
    f16 ? run_rotary(NPUKIT_TABLE(Gpu, rope_half_f16), call)
        : run_rotary(NPUKIT_TABLE(Gpu, rope_half_f32), call);
  } else {
    f16 ? run_rotary(NPUKIT_TABLE(Gpu, rope_interleaved_f16), call)
        : run_rotary(NPUKIT_TABLE(Gpu, rope_interleaved_f32), call);
  }
}

OpSpec make_spec() {
  OpSpec op;
  op.name = "rope";
  op.summary = "rotary position embedding of x[tokens, heads, head_dim] at positions[tokens]";
  const std::vector<DType> floats = {DType::float32, DType::float16};
  op.tensors = {
      {"x", TensorSpec::Role::input, {"tokens", "heads", "head_dim"}, floats, ""},
      {"positions", TensorSpec::Role::input, {"tokens"}, {DType::int32}, ""},
      {"y", TensorSpec::Role::output, {"tokens", "heads", "head_dim"}, floats, "x"},
  };
  op.params = {
      {"theta", ParamSpec::Kind::real, "10000", 1.0, 1e12, {}, "base of the angle: pair i turns by p * theta^(-2i/rotary_dim)"},
      {"style", ParamSpec::Kind::choice, "half", 0, 0, {"interleaved", "half"},
       "pairs (2i, 2i+1) as GPT-J / Meta Llama, or (i, i + rotary_dim/2) as GPT-NeoX / Hugging Face"},
      {"rotary_dim", ParamSpec::Kind::integer, "0", 0, 1 << 30, {},
       "dims rotated, even, <= head_dim; 0 means head_dim; the rest pass through"},
      {"max_position", ParamSpec::Kind::integer, "1048576", 1, 2147483647.0, {}, "positions must be below this"},
  };
  op.check = check;
  op.kernels = {{"cpu", rope_run<false>}, {"gpu-opencl", rope_run<true>}, {"gpu-cuda", rope_run<true>}};
  op.cpu_tiers = {"avx512", "avx2", "sse41"};
  op.cuda_tensors = true;
  return op;
}

}  // namespace

const OpSpec& rope_spec() {
  static const OpSpec spec = make_spec();
  return spec;
}

}  // namespace npukit
