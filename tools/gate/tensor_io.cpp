#include "tools/gate/tensor_io.h"

#include <cmath>
#include <cstring>

#include "golden/half.h"

namespace npukit::gate {
namespace {

template <class T>
void store(const std::vector<double>& v, void* dst) {
  T* out = static_cast<T*>(dst);
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
}

template <class T>
std::vector<double> load(const void* src, int64_t n) {
  const T* in = static_cast<const T*>(src);
  return std::vector<double>(in, in + n);
}

}  // namespace

void encode(const std::vector<double>& values, DType dtype, void* dst) {
  switch (dtype) {
    case DType::float32: return store<float>(values, dst);
    case DType::float64: return store<double>(values, dst);
    case DType::int8: return store<int8_t>(values, dst);
    case DType::uint8: return store<uint8_t>(values, dst);
    case DType::int32: return store<int32_t>(values, dst);
    case DType::int64: return store<int64_t>(values, dst);
    case DType::float16: {
      uint16_t* out = static_cast<uint16_t*>(dst);
      for (size_t i = 0; i < values.size(); ++i) {
        out[i] = golden::float_to_half_bits(static_cast<float>(values[i]));
      }
      return;
    }
  }
}

std::vector<double> decode(const void* src, DType dtype, int64_t n) {
  switch (dtype) {
    case DType::float32: return load<float>(src, n);
    case DType::float64: return load<double>(src, n);
    case DType::int8: return load<int8_t>(src, n);
    case DType::uint8: return load<uint8_t>(src, n);
    case DType::int32: return load<int32_t>(src, n);
    case DType::int64: return load<int64_t>(src, n);
    case DType::float16: {
      const uint16_t* in = static_cast<const uint16_t*>(src);
      std::vector<double> out(n);
      for (int64_t i = 0; i < n; ++i) out[i] = golden::half_bits_to_float(in[i]);
      return out;
    }
  }
  return {};
}

}  // namespace npukit::gate
