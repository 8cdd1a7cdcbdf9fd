#include "tools/float_npy.h"

#include <cstring>
#include <exception>

#include "layouts/half.h"
#include "runtime/error.h"
#include "runtime/tensor.h"
#include "tools/npy.h"

namespace npukit::cli {

FloatNpy read_float_npy(const std::string& key, const std::string& path, std::string_view what) {
  npy::NpyArray arr;
  try {
    arr = npy::read(path);
  } catch (const std::exception& e) {
    fail(Errc::invalid_argument, "{}{}", key, e.what());  // npy::read's message starts with the path
  }
  if (arr.dtype != DType::float32 && arr.dtype != DType::float16)
    fail(Errc::invalid_argument, "{}{}: dtype {}: {} must be float32 or float16 (x.astype(np.float32))", key, path,
         dtype_name(arr.dtype), what);
  const int64_t count = arr.size();
  if (count < 0 || arr.bytes.size() != uint64_t(count) * dtype_size(arr.dtype))
    fail(Errc::invalid_argument, "{}{}: shape {}: its element count overflows or does not match the data", key, path,
         shape_string(arr.shape));
  FloatNpy out;
  out.shape = arr.shape;
  if (arr.dtype == DType::float16) {
    out.values = layouts::widen_halves(arr.bytes.data(), count);
  } else {
    out.values.resize(static_cast<size_t>(count));
    if (count) std::memcpy(out.values.data(), arr.bytes.data(), arr.bytes.size());
  }
  return out;
}

}  // namespace npukit::cli
