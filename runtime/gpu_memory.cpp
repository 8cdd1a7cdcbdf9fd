#include "runtime/gpu_memory.h"

#include "HalideRuntimeCuda.h"
#include "HalideRuntimeOpenCL.h"
#include "runtime/error.h"
#include "runtime/gpu_call.h"
#include "runtime/gpu_device.h"
#include "runtime/halide_call.h"
#include "runtime/op_spec.h"

namespace npukit {
namespace {

const halide_device_interface_t* interface_of(const std::string& family) {
  if (family == "gpu-cuda") return halide_cuda_device_interface();
  if (family == "gpu-opencl") return halide_opencl_device_interface();
  fail(Errc::internal, "GPU memory: unknown GPU family '{}'", family);
}

}  // namespace

GpuTensor::GpuTensor(const std::string& family, DType dtype, const Dims& shape)
    : GpuTensor(family, TensorView{nullptr, dtype, shape, {}}) {}

GpuTensor::GpuTensor(const std::string& family, const TensorView& host) : family_(family) {
  if (!host.contiguous() || host.memory != TensorView::Memory::host) {
    fail(Errc::internal, "GPU memory: a device copy needs a contiguous host tensor");
  }
  require_gpu_device(family);
  const halide_device_interface_t* device = interface_of(family);
  buffer_ = std::make_unique<HalideBuffer>(host);
  halide_buffer_t* b = buffer_->get();
  HalideCallContext ctx;
  int status = 0;
  if (b->host != nullptr) {
    b->set_host_dirty(true);
    status = halide_copy_to_device(&ctx, b, device);  // allocates, then copies
    b->host = nullptr;  // the caller's memory: only read here
    b->set_host_dirty(false);
  } else {
    status = halide_device_malloc(&ctx, b, device);
  }
  if (status != 0 && b->device != 0) halide_device_free(&ctx, b);  // the copy failed after the allocation
  check_halide_status(status, ctx, "allocating GPU memory", family);
  view_ = TensorView{nullptr, host.dtype, host.shape, {}};
  if (family == "gpu-cuda") {
    view_.data = reinterpret_cast<void*>(halide_cuda_get_device_ptr(&ctx, b));
    view_.memory = TensorView::Memory::cuda;
  } else {
    view_.data = reinterpret_cast<void*>(halide_opencl_get_cl_mem(&ctx, b));
    view_.memory = TensorView::Memory::opencl;
  }
}

void GpuTensor::copy_from_device(const TensorView& src) {
  HalideBuffer from(src);
  HalideCallContext ctx;
  int status = wrap_device_memory(ctx, from.get(), src, family_);
  if (status == 0) {
    status = halide_buffer_copy(&ctx, from.get(), buffer_->get()->device_interface, buffer_->get());
    detach_device_memory(ctx, from.get(), family_);
  }
  check_halide_status(status, ctx, "copying GPU memory", family_);
}

void GpuTensor::copy_to_host(void* dst) const {
  halide_buffer_t* b = buffer_->get();
  HalideCallContext ctx;
  b->host = static_cast<uint8_t*>(dst);
  b->set_device_dirty(true);
  const int status = halide_copy_to_host(&ctx, b);
  b->host = nullptr;  // the caller's memory
  b->set_device_dirty(false);
  check_halide_status(status, ctx, "copying GPU memory to the host", family_);
}

const TensorView& GpuScratch::copy_of(const TensorView& t) {
  if (t.memory == TensorView::Memory::host) return tensors_.emplace_back(family_, t).view();
  GpuTensor& copy = tensors_.emplace_back(family_, t.dtype, t.shape);
  copy.copy_from_device(t);
  return copy.view();
}

GpuTensor::~GpuTensor() {
  HalideCallContext ctx;
  halide_device_free(&ctx, buffer_->get());  // nothing to report from a destructor
}

RunScratch::RunScratch(const Call& call, ScratchFrame& frame) : frame_(frame) {
  if (is_gpu_family(call.target)) device_.emplace(call.target);
}

TensorView RunScratch::take(DType dtype, const Dims& shape) {
  if (device_) return device_->take(dtype, shape);
  TensorView v{nullptr, dtype, shape, {}};
  v.data = frame_.take<char>(static_cast<size_t>(v.numel()) * dtype_size(dtype));
  return v;
}

TensorView RunScratch::copy_of(const TensorView& t) { return device_ ? device_->copy_of(t) : t; }

TensorView RunScratch::broadcast(TensorView t, const Dims& outer) {
  Dims shape = outer, strides(outer.size() + t.shape.size(), 0);  // the outer strides stay 0
  for (int64_t extent : t.shape) shape.push_back(extent);
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > outer.size();) {
    strides[i] = step;
    step *= shape[i];
  }
  t.shape = shape;
  t.strides = strides;
  return t;
}

TensorView RunScratch::zero_rows(int64_t rows, int64_t row) {
  return broadcast(copy_of({frame_.fill(static_cast<size_t>(row), 0.0f), DType::float32, {row}, {}}), {rows});
}

const TensorView& GpuConstantCopies::of(const TensorView& host) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, copy] : copies_) {
    if (key == host.data) return copy->view();
  }
  auto copy = std::make_unique<GpuTensor>(family_, host);
  return copies_.emplace_back(host.data, std::move(copy)).second->view();
}

size_t GpuConstantCopies::uploads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return copies_.size();
}

const TensorView& gpu_resident(const Call& call, std::string_view name, const TensorView& host) {
  if (call.packed == nullptr) return host;
  auto it = find_name(*call.packed, name);
  if (it == call.packed->end() || !it->second.gpu) return host;
  return it->second.gpu->of(host);
}

}  // namespace npukit
