// DLPack tensors as the C ABI receives them: DLTensor → TensorView with the checks and
// messages every entry point shares, and the DType of a DLPack dtype.
#pragma once

#include <dlpack/dlpack.h>

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/tensor.h"

namespace npukit {

// The device type as the integer the caller stored. DLDeviceType is an enum without a
// fixed underlying type, so a C host may store any int32 in it, and loading one outside the
// enum's range as the enum is undefined behaviour in C++ (UBSan, tests/fuzz/c_api_fuzz.cpp).
int32_t device_type_code(const DLDevice& device);

// The npukit dtype of a DLPack dtype with lanes = 1, or nullopt.
std::optional<DType> dtype_of(const DLDataType& t);
// Its inverse: the DLPack dtype (lanes = 1) of an npukit dtype.
DLDataType dlpack_dtype(DType t);

// `t` (the tensor called `name`) as a TensorView; an error names the tensor and the rule
// (NULL pointer, device, shape, dtype).
TensorView view_of(const DLTensor* t, const std::string& name);

}  // namespace npukit
