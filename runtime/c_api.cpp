// The C ABI (include/npukit/npukit.h) over the registry: DLTensor → TensorView, and every
// C++ error turned into a status and a thread-local message.
#include <exception>
#include <map>
#include <string>

#include "npukit/npukit.h"
#include "runtime/bind.h"
#include "runtime/error.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

thread_local std::string last_error;

DType dtype_of(const DLDataType& t, const std::string& name) {
  if (t.lanes != 1) fail(Errc::invalid_argument, "tensor " + name + ": lanes = " + std::to_string(t.lanes) + ": must be 1");
  if (t.code == kDLFloat && t.bits == 32) return DType::float32;
  if (t.code == kDLFloat && t.bits == 16) return DType::float16;
  if (t.code == kDLFloat && t.bits == 64) return DType::float64;
  if (t.code == kDLInt && t.bits == 8) return DType::int8;
  if (t.code == kDLInt && t.bits == 32) return DType::int32;
  if (t.code == kDLInt && t.bits == 64) return DType::int64;
  if (t.code == kDLUInt && t.bits == 8) return DType::uint8;
  fail(Errc::invalid_argument, "tensor " + name + ": DLPack dtype (code " + std::to_string(t.code) + ", bits " +
                                   std::to_string(t.bits) + ") is not one npukit knows");
}

TensorView view_of(const npukit_tensor& arg, size_t index) {
  if (arg.name == nullptr) fail(Errc::invalid_argument, "tensors[" + std::to_string(index) + "].name is NULL");
  const std::string name = arg.name;
  if (arg.tensor == nullptr) fail(Errc::invalid_argument, "tensor " + name + ": DLTensor pointer is NULL");
  const DLTensor& t = *arg.tensor;
  if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDA) {
    fail(Errc::unsupported, "tensor " + name + ": device type " + std::to_string(t.device.device_type) +
                                ": npukit's C ABI takes CPU tensors (kDLCPU), and CUDA tensors (kDLCUDA) on target gpu-cuda");
  }
  if (t.ndim < 0 || (t.ndim > 0 && t.shape == nullptr)) fail(Errc::invalid_argument, "tensor " + name + ": shape is NULL");
  TensorView v;
  v.dtype = dtype_of(t.dtype, name);
  if (t.device.device_type == kDLCUDA) v.memory = TensorView::Memory::cuda;
  v.data = t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset;
  v.shape.assign(t.shape, t.shape + t.ndim);
  if (t.strides != nullptr) v.strides.assign(t.strides, t.strides + t.ndim);
  return v;
}

npukit_status status_of(Errc code) {
  switch (code) {
    case Errc::invalid_argument: return NPUKIT_INVALID_ARGUMENT;
    case Errc::unsupported: return NPUKIT_UNSUPPORTED;
    case Errc::kernel_failed: return NPUKIT_KERNEL_FAILED;
    case Errc::internal: return NPUKIT_INTERNAL;
  }
  return NPUKIT_INTERNAL;
}

}  // namespace
}  // namespace npukit

extern "C" {

__attribute__((visibility("default"))) npukit_status npukit_run(const char* op, const char* target,
                                                                const npukit_tensor* tensors, size_t n_tensors,
                                                                const npukit_param* params, size_t n_params) {
  using namespace npukit;
  last_error.clear();
  try {
    if (op == nullptr) fail(Errc::invalid_argument, "op is NULL");
    if (n_tensors > 0 && tensors == nullptr) fail(Errc::invalid_argument, "tensors is NULL but n_tensors > 0");
    if (n_params > 0 && params == nullptr) fail(Errc::invalid_argument, "params is NULL but n_params > 0");
    std::map<std::string, TensorView> views;
    for (size_t i = 0; i < n_tensors; ++i) {
      TensorView v = view_of(tensors[i], i);
      if (!views.emplace(tensors[i].name, std::move(v)).second) {
        fail(Errc::invalid_argument, std::string("tensor ") + tensors[i].name + " given twice");
      }
    }
    std::map<std::string, std::string> values;
    for (size_t i = 0; i < n_params; ++i) {
      if (params[i].name == nullptr || params[i].value == nullptr) {
        fail(Errc::invalid_argument, "params[" + std::to_string(i) + "] has a NULL name or value");
      }
      if (!values.emplace(params[i].name, params[i].value).second) {
        fail(Errc::invalid_argument, std::string("parameter ") + params[i].name + " given twice");
      }
    }
    run_call(bind_call(find_op(op), target ? target : "cpu", views, values));
    return NPUKIT_OK;
  } catch (const Error& e) {
    last_error = e.what();
    return status_of(e.code());
  } catch (const std::exception& e) {
    last_error = std::string("internal error: ") + e.what();
    return NPUKIT_INTERNAL;
  } catch (...) {
    last_error = "internal error: unknown exception";
    return NPUKIT_INTERNAL;
  }
}

__attribute__((visibility("default"))) const char* npukit_last_error(void) { return npukit::last_error.c_str(); }

__attribute__((visibility("default"))) size_t npukit_op_count(void) { return npukit::all_ops().size(); }

__attribute__((visibility("default"))) const char* npukit_op_name(size_t index) {
  const auto& ops = npukit::all_ops();
  return index < ops.size() ? ops[index]->name.c_str() : nullptr;
}

__attribute__((visibility("default"))) const char* npukit_version(void) { return "0.1.0"; }

}  // extern "C"
