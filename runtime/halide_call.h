// Calling ahead-of-time Halide kernels: TensorView → halide_buffer_t, and Halide runtime
// errors turned into npukit::Error instead of Halide's default abort().
#pragma once

#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "runtime/cpu_variant.h"
#include "runtime/error.h"
#include "runtime/tensor.h"

namespace npukit {

// A halide_buffer_t over a TensorView. Halide's dimension 0 is the innermost, so the
// numpy shape is reversed. The dimensions live inside (built on every kernel call, so it
// allocates nothing), as many as a TensorView holds.
class HalideBuffer {
 public:
  static constexpr size_t kMaxDims = Dims::kMaxRank;

  explicit HalideBuffer(const TensorView& t);
  HalideBuffer(const HalideBuffer&) = delete;
  HalideBuffer& operator=(const HalideBuffer&) = delete;
  halide_buffer_t* get() { return &buf_; }

 private:
  halide_buffer_t buf_{};
  // The first buf_.dimensions are set; a union, so that halide_dimension_t's constructor
  // does not zero all of them first.
  union HalideDims {
    HalideDims() {}
    halide_dimension_t d[kMaxDims];
  } dims_;
};

// Passed as the kernels' user_context: the runtime's error handler appends here, so the
// message reaches the caller even when the error is raised on a Halide worker thread.
struct HalideCallContext {
  HalideCallContext();  // installs npukit's handlers first, so nothing can reach Halide's abort()
  std::string error;
};

// Installs npukit's Halide error and print handlers and its allocator
// (runtime/halide_memory.h), once per process; idempotent.
void install_halide_handlers();

// Throws Errc::kernel_failed naming the kernel (and its tier or family, when given) when
// `status` is nonzero; the name is put together only then.
void check_halide_status(int status, const HalideCallContext& ctx, const char* kernel, std::string_view variant = {});

// Calls the best tier of `kernel` this CPU runs (or the best at or below a forced `tier`),
// with a fresh error context as the user_context and `args` after it; a Halide error
// becomes npukit::Error.
template <class Fn, size_t N, class... Args>
void call_cpu_kernel(const CpuKernel<Fn, N>& kernel, std::string_view tier, Args&&... args) {
  const auto& variant = pick_cpu_variant(kernel, tier);
  HalideCallContext ctx;
  const int status = variant.fn(&ctx, std::forward<Args>(args)...);
  check_halide_status(status, ctx, kernel.name, variant.tier);
}

}  // namespace npukit
