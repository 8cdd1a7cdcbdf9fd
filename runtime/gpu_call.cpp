#include "runtime/gpu_call.h"

#include "HalideRuntimeCuda.h"
#include "HalideRuntimeOpenCL.h"

namespace npukit {

int wrap_device_memory(HalideCallContext& ctx, halide_buffer_t* b, const TensorView& t, std::string_view family) {
  const bool cuda = family == "gpu-cuda";
  if (t.memory != (cuda ? TensorView::Memory::cuda : TensorView::Memory::opencl)) {
    fail(Errc::internal, "a {} kernel was given device memory of another GPU API", family);
  }
  b->host = nullptr;
  const auto handle = reinterpret_cast<uint64_t>(t.data);
  return cuda ? halide_cuda_wrap_device_ptr(&ctx, b, handle) : halide_opencl_wrap_cl_mem(&ctx, b, handle);
}

int detach_device_memory(HalideCallContext& ctx, halide_buffer_t* b, std::string_view family) {
  return family == "gpu-cuda" ? halide_cuda_detach_device_ptr(&ctx, b) : halide_opencl_detach_cl_mem(&ctx, b);
}

GpuBuffers::~GpuBuffers() {
  for (Entry& e : entries_) {
    halide_buffer_t* b = e.buffer.get();
    if (e.wrapped) {
      detach_device_memory(free_ctx_, b, family_);
    } else if (b->device) {
      halide_device_free(&free_ctx_, b);
    }
  }
}

halide_buffer_t* GpuBuffers::add(const TensorView& t, bool read, bool written) {
  Entry& e = entries_.emplace_back(t);
  halide_buffer_t* b = e.buffer.get();
  if (fp16_as_bits_ && b->type == halide_type_t(halide_type_float, 16)) b->type = halide_type_t(halide_type_uint, 16);
  if (t.memory != TensorView::Memory::host) {
    // Device memory: no host side, nothing to copy either way.
    const int status = wrap_device_memory(free_ctx_, b, t, family_);
    if (status != 0) check_halide_status(status, free_ctx_, "wrapping device memory", family_);
    e.wrapped = true;
    return b;
  }
  e.written = written;
  // Host-dirty: the kernel's first device use copies the host data over.
  if (read) b->set_host_dirty(true);
  return b;
}

halide_buffer_t* GpuBuffers::in(const TensorView& t) { return add(t, true, false); }
halide_buffer_t* GpuBuffers::out(const TensorView& t) { return add(t, false, true); }
halide_buffer_t* GpuBuffers::inout(const TensorView& t) { return add(t, true, true); }

int GpuBuffers::copy_back(HalideCallContext& ctx) {
  for (Entry& e : entries_) {
    if (!e.written) continue;
    if (const int status = halide_copy_to_host(&ctx, e.buffer.get()); status != 0) return status;
  }
  return 0;
}

}  // namespace npukit
