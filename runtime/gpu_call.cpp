#include "runtime/gpu_call.h"

#include "HalideRuntimeCuda.h"

namespace npukit {

GpuBuffers::~GpuBuffers() {
  for (Entry& e : entries_) {
    halide_buffer_t* b = e.buffer.get();
    if (e.wrapped) {
      halide_cuda_detach_device_ptr(&free_ctx_, b);  // the caller's memory: never freed here
    } else if (b->device) {
      halide_device_free(&free_ctx_, b);
    }
  }
}

halide_buffer_t* GpuBuffers::add(const TensorView& t, bool read, bool written) {
  Entry& e = entries_.emplace_back(t);
  halide_buffer_t* b = e.buffer.get();
  if (fp16_as_bits_ && b->type == halide_type_t(halide_type_float, 16)) b->type = halide_type_t(halide_type_uint, 16);
  if (t.memory == TensorView::Memory::cuda) {
    // A device tensor: no host side, nothing to copy either way.
    b->host = nullptr;
    if (const int status = halide_cuda_wrap_device_ptr(&free_ctx_, b, reinterpret_cast<uint64_t>(t.data)); status != 0) {
      check_halide_status(status, free_ctx_, "wrapping CUDA device pointer");
    }
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
