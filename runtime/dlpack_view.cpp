#include "runtime/dlpack_view.h"

#include <cstring>

#include "runtime/error.h"

namespace npukit {

int32_t device_type_code(const DLDevice& device) {
  static_assert(sizeof(device.device_type) == sizeof(int32_t), "DLPack stores the device type as 4 bytes");
  int32_t code = 0;
  std::memcpy(&code, &device.device_type, sizeof code);
  return code;
}

std::optional<DType> dtype_of(const DLDataType& t) {
  if (t.lanes != 1) return std::nullopt;
  if (t.code == kDLFloat && t.bits == 32) return DType::float32;
  if (t.code == kDLFloat && t.bits == 16) return DType::float16;
  if (t.code == kDLFloat && t.bits == 64) return DType::float64;
  if (t.code == kDLInt && t.bits == 8) return DType::int8;
  if (t.code == kDLInt && t.bits == 32) return DType::int32;
  if (t.code == kDLInt && t.bits == 64) return DType::int64;
  if (t.code == kDLUInt && t.bits == 8) return DType::uint8;
  return std::nullopt;
}

DLDataType dlpack_dtype(DType t) {
  const uint8_t bits = static_cast<uint8_t>(dtype_size(t) * 8);
  const uint8_t code = dtype_is_float(t) ? kDLFloat : t == DType::uint8 ? kDLUInt : kDLInt;
  return DLDataType{code, bits, 1};
}

TensorView view_of(const DLTensor* tensor, const std::string& name) {
  if (tensor == nullptr) fail(Errc::invalid_argument, "tensor {}: DLTensor pointer is NULL", name);
  const DLTensor& t = *tensor;
  const int32_t device = device_type_code(t.device);
  if (device != kDLCPU && device != kDLCUDA) {
    fail(Errc::unsupported,
         "tensor {}: device type {}: npukit's C ABI takes CPU tensors (kDLCPU), and CUDA tensors (kDLCUDA) on target "
         "gpu-cuda",
         name, device);
  }
  if (t.ndim < 0) fail(Errc::invalid_argument, "tensor {}: ndim = {} is negative", name, t.ndim);
  if (t.ndim > int32_t(Dims::kMaxRank)) {
    fail(Errc::invalid_argument, "tensor {}: ndim = {}: npukit's tensors have at most {} dimensions", name, t.ndim,
         Dims::kMaxRank);
  }
  if (t.ndim > 0 && t.shape == nullptr) fail(Errc::invalid_argument, "tensor {}: shape is NULL", name);
  TensorView v;
  if (t.dtype.lanes != 1) {
    fail(Errc::invalid_argument, "tensor {}: lanes = {}: must be 1", name, t.dtype.lanes);
  }
  const std::optional<DType> dtype = dtype_of(t.dtype);
  if (!dtype) {
    fail(Errc::invalid_argument, "tensor {}: DLPack dtype (code {}, bits {}) is not one npukit knows", name,
         t.dtype.code, t.dtype.bits);
  }
  v.dtype = *dtype;
  if (device == kDLCUDA) v.memory = TensorView::Memory::cuda;
  v.data = t.data == nullptr ? nullptr : static_cast<char*>(t.data) + t.byte_offset;
  v.shape.assign(t.shape, t.shape + t.ndim);
  if (t.strides != nullptr) v.strides.assign(t.strides, t.strides + t.ndim);
  return v;
}

}  // namespace npukit
