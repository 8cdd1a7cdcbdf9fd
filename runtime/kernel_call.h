// One kernel call that reads the same on every target: the arguments say which tensors
// the kernel reads (In), writes (Out) or updates (InOut), and scalars pass as they are.
// With a CPU table the tensors become halide_buffer_t views and the call's tier is used;
// with a GPU table (runtime/gpu_call.h) they are copied to the device and back.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <type_traits>

#include "runtime/cpu_variant.h"
#include "runtime/gpu_call.h"
#include "runtime/halide_call.h"
#include "runtime/op_spec.h"

namespace npukit {

// They refer to the tensors (a TensorView copy would allocate its shape on every call); a
// braced temporary, In{{data, dtype, {n}, {}}}, lives as long as the In that holds it.
struct In {
  const TensorView& t;
};
struct Out {
  const TensorView& t;
};
struct InOut {
  const TensorView& t;
};

template <class A>
inline constexpr bool is_tensor_arg = std::is_same_v<A, In> || std::is_same_v<A, Out> || std::is_same_v<A, InOut>;

template <class Fn, size_t N, class... Args>
void call_kernel(const CpuKernel<Fn, N>& kernel, const Call& call, Args&&... args) {
  // On the stack, one per tensor argument: stable addresses for the halide_buffer_t pointers.
  constexpr size_t kTensors = (size_t(0) + ... + size_t(is_tensor_arg<std::decay_t<Args>>));
  std::array<std::optional<HalideBuffer>, kTensors> buffers;
  size_t next = 0;
  auto lower = [&](auto&& a) -> decltype(auto) {
    using A = std::decay_t<decltype(a)>;
    if constexpr (is_tensor_arg<A>) {
      return buffers[next++].emplace(a.t).get();
    } else {
      return std::forward<decltype(a)>(a);
    }
  };
  call_cpu_kernel(kernel, call.tier, lower(std::forward<Args>(args))...);
}

template <class Fn, size_t N, class... Args>
void call_kernel(const GpuKernel<Fn, N>& kernel, const Call& call, Args&&... args) {
  GpuCall g(kernel, call.target);
  auto lower = [&](auto&& a) -> decltype(auto) {
    using A = std::decay_t<decltype(a)>;
    if constexpr (std::is_same_v<A, In>) {
      return g.in(a.t);
    } else if constexpr (std::is_same_v<A, Out>) {
      return g.out(a.t);
    } else if constexpr (std::is_same_v<A, InOut>) {
      return g.inout(a.t);
    } else {
      return std::forward<decltype(a)>(a);
    }
  };
  g.run(lower(std::forward<Args>(args))...);
}

// The CPU tiers or the GPU variants of one kernel.
template <bool Gpu, class CpuTable, class GpuTable>
constexpr const auto& pick_table(const CpuTable& cpu, const GpuTable& gpu) {
  if constexpr (Gpu) {
    return gpu;
  } else {
    return cpu;
  }
}

}  // namespace npukit

// `kernels::NAME` (CPU tiers) or `kernels::NAME_gpu` (GPU variants); each table carries the
// kernel's name, so a call names its kernel once.
#define NPUKIT_TABLE(GPU, NAME) ::npukit::pick_table<GPU>(::npukit::kernels::NAME, ::npukit::kernels::NAME##_gpu)
