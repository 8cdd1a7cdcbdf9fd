#include "layouts/nz.h"

#include <stdexcept>
#include <string>

namespace npukit::layouts {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <class T>
std::vector<T> pack(const T* src, int64_t rows, int64_t cols) {
  const NzShape s = nz_shape(rows, cols, sizeof(T));
  if (src == nullptr && rows * cols > 0) throw std::invalid_argument("pack_nz: src is null for a non-empty matrix");
  std::vector<T> out(static_cast<size_t>(s.elements()), T(0));  // the padding stays zero
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(s.offset(r, c))] = src[r * cols + c];
  return out;
}

template <class T>
std::vector<T> unpack(const std::vector<T>& nz, int64_t rows, int64_t cols) {
  const NzShape s = nz_shape(rows, cols, sizeof(T));
  if (static_cast<int64_t>(nz.size()) != s.elements())
    throw std::invalid_argument("unpack_nz: nz has " + std::to_string(nz.size()) + " elements, but a " +
                                std::to_string(rows) + "x" + std::to_string(cols) + " matrix packs into " +
                                std::to_string(s.elements()));
  std::vector<T> out(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) out[static_cast<size_t>(r * cols + c)] = nz[static_cast<size_t>(s.offset(r, c))];
  return out;
}

}  // namespace

NzShape nz_shape(int64_t rows, int64_t cols, int64_t element_bytes) {
  if (rows < 0) throw std::invalid_argument("nz_shape: rows = " + std::to_string(rows) + ": must not be negative");
  if (cols < 0) throw std::invalid_argument("nz_shape: cols = " + std::to_string(cols) + ": must not be negative");
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4)
    throw std::invalid_argument("nz_shape: element_bytes = " + std::to_string(element_bytes) +
                                ": must be 1, 2 or 4 (int8, fp16, fp32)");
  NzShape s;
  s.rows = rows;
  s.cols = cols;
  s.k0 = kNzFractalRowBytes / element_bytes;
  s.row_blocks = ceil_div(rows, kNzFractalRows);
  s.col_blocks = ceil_div(cols, s.k0);
  return s;
}

std::vector<int8_t> pack_nz(const int8_t* src, int64_t rows, int64_t cols) { return pack(src, rows, cols); }
std::vector<uint16_t> pack_nz(const uint16_t* src, int64_t rows, int64_t cols) { return pack(src, rows, cols); }
std::vector<float> pack_nz(const float* src, int64_t rows, int64_t cols) { return pack(src, rows, cols); }

std::vector<int8_t> unpack_nz(const std::vector<int8_t>& nz, int64_t rows, int64_t cols) { return unpack(nz, rows, cols); }
std::vector<uint16_t> unpack_nz(const std::vector<uint16_t>& nz, int64_t rows, int64_t cols) {
  return unpack(nz, rows, cols);
}
std::vector<float> unpack_nz(const std::vector<float>& nz, int64_t rows, int64_t cols) { return unpack(nz, rows, cols); }

}  // namespace npukit::layouts
