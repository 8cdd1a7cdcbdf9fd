#include "runtime/tensor.h"

#include "runtime/error.h"
#include "runtime/message.h"

namespace npukit {

// Runs before the shape's range checks (bind.cpp), so the product may wrap: once it no
// longer fits int64, no stride can equal it, and only dimensions of extent 1 may follow
// (found by tests/fuzz/c_api_fuzz.cpp: UBSan, signed overflow).
bool TensorView::contiguous() const {
  if (strides.empty()) return true;
  int64_t step = 1;
  bool past_int64 = false;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1 && (past_int64 || strides[i] != step)) return false;
    past_int64 = past_int64 || __builtin_mul_overflow(step, shape[i], &step);
  }
  return true;
}

TensorView outer_slice(const TensorView& x, int64_t i) {
  if (x.shape.empty() || i < 0 || i >= x.shape[0]) fail(Errc::internal, "outer_slice: {} outside {}", i, shape_string(x.shape));
  if (x.shape[0] == 1) return x;  // the whole tensor: no address to offset (an OpenCL buffer's is no pointer)
  if (x.memory == TensorView::Memory::opencl) fail(Errc::internal, "outer_slice: a tensor in an OpenCL buffer");
  int64_t step = 1;
  if (!x.strides.empty()) {
    step = x.strides[0];
  } else {
    for (size_t d = 1; d < x.shape.size(); ++d) step *= x.shape[d];
  }
  TensorView s = x;
  s.data = static_cast<char*>(x.data) + i * step * static_cast<int64_t>(dtype_size(x.dtype));
  s.shape[0] = 1;
  return s;
}

std::string shape_string(const int64_t* shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) append(s, "{}{}", i ? ", " : "", shape[i]);
  return s + "]";
}

}  // namespace npukit
