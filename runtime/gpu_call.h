// Calling ahead-of-time GPU kernels (cmake/NpukitGpuKernels.cmake writes their tables) on
// host tensors: inputs are marked host-dirty so that the kernel copies them to the device,
// outputs and inout tensors are copied back to the host after it, and every device
// allocation is freed when the call ends, also when it fails. Tensors already in the
// family's device memory (a caller's kDLCUDA tensor, runtime/gpu_memory.h) pass as they are.
#pragma once

#include <deque>
#include <string>
#include <string_view>

#include "HalideRuntime.h"
#include "runtime/error.h"
#include "runtime/gpu_device.h"
#include "runtime/halide_call.h"
#include "runtime/tensor.h"
#include "runtime/text.h"

namespace npukit {

template <class Fn>
struct GpuVariant {
  const char* family;         // "gpu-opencl", "gpu-cuda"
  const char* halide_target;  // what it was compiled for
  bool fp16_as_bits;          // fp16 tensors are passed as uint16 (no half type on the device)
  Fn fn;
};

// The table of one kernel's GPU variants, with its name: kernels/<kernel>_gpu.h defines one
// as `npukit::kernels::<kernel>_gpu`.
template <class Fn, size_t N>
struct GpuKernel {
  const char* name;
  GpuVariant<Fn> variants[N];
};

// Points `b` (no host side) at `t`'s device memory, which must be `family`'s, and takes it
// back off (never freeing it): the caller's kDLCUDA tensors and npukit's own.
int wrap_device_memory(HalideCallContext& ctx, halide_buffer_t* b, const TensorView& t, std::string_view family);
int detach_device_memory(HalideCallContext& ctx, halide_buffer_t* b, std::string_view family);

// The buffers of one GPU kernel call and their trips to and from the device.
class GpuBuffers {
 public:
  GpuBuffers(std::string_view family, bool fp16_as_bits) : family_(family), fp16_as_bits_(fp16_as_bits) {}
  GpuBuffers(const GpuBuffers&) = delete;
  GpuBuffers& operator=(const GpuBuffers&) = delete;
  ~GpuBuffers();  // frees the device allocations

  halide_buffer_t* in(const TensorView& t);     // read by the kernel
  halide_buffer_t* out(const TensorView& t);    // written by the kernel
  halide_buffer_t* inout(const TensorView& t);  // read and updated in place

  // Copies outputs and inout tensors back to the host; a failure is reported into `ctx`
  // and returned as a Halide status.
  int copy_back(HalideCallContext& ctx);

 private:
  struct Entry {
    explicit Entry(const TensorView& t) : buffer(t) {}
    HalideBuffer buffer;
    bool written = false;  // a host tensor to copy back
    bool wrapped = false;  // device memory: the caller's or npukit's own, never freed here
  };
  halide_buffer_t* add(const TensorView& t, bool read, bool written);

  std::string_view family_;
  bool fp16_as_bits_;
  std::deque<Entry> entries_;  // a deque: the halide_buffer_t pointers handed out stay valid
  HalideCallContext free_ctx_;
};

// The variant of `kernel` for `family`, after checking that the family's device is here.
template <class Fn, size_t N>
const GpuVariant<Fn>& pick_gpu_variant(const GpuKernel<Fn, N>& kernel, const std::string& family) {
  for (const GpuVariant<Fn>& v : kernel.variants) {
    if (family == v.family) {
      require_gpu_device(family);
      return v;
    }
  }
  const std::string families = join_names(kernel.variants, [](const GpuVariant<Fn>& v) { return v.family; });
  fail(Errc::unsupported, "kernel {} has no variant for target '{}' (it has: {})", kernel.name, family, families);
}

// One call of a GPU kernel: pick the variant, bind buffers with in/out/inout, then run.
template <class Fn>
class GpuCall {
 public:
  template <size_t N>
  GpuCall(const GpuKernel<Fn, N>& kernel, const std::string& family)
      : variant_(pick_gpu_variant(kernel, family)), kernel_(kernel.name), buffers_(variant_.family, variant_.fp16_as_bits) {}

  halide_buffer_t* in(const TensorView& t) { return buffers_.in(t); }
  halide_buffer_t* out(const TensorView& t) { return buffers_.out(t); }
  halide_buffer_t* inout(const TensorView& t) { return buffers_.inout(t); }

  // Runs the kernel on `args` (the bound buffers and the scalars, in the kernel's order)
  // and brings the results home; a Halide error becomes npukit::Error.
  template <class... Args>
  void run(Args&&... args) {
    HalideCallContext ctx;
    int status = variant_.fn(&ctx, std::forward<Args>(args)...);
    if (status == 0) status = buffers_.copy_back(ctx);
    check_halide_status(status, ctx, kernel_, variant_.family);
  }

 private:
  const GpuVariant<Fn>& variant_;
  const char* kernel_;
  GpuBuffers buffers_;
};

template <class Fn, size_t N>
GpuCall(const GpuKernel<Fn, N>&, const std::string&) -> GpuCall<Fn>;

// Whether `family` names a GPU target ("gpu-opencl", "gpu-cuda").
inline bool is_gpu_family(std::string_view family) { return family.substr(0, 4) == "gpu-"; }

}  // namespace npukit
