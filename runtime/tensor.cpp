#include "runtime/tensor.h"

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

std::string shape_string(const int64_t* shape, size_t rank) {
  std::string s = "[";
  for (size_t i = 0; i < rank; ++i) append(s, "{}{}", i ? ", " : "", shape[i]);
  return s + "]";
}

}  // namespace npukit
