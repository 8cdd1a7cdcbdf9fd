// The fractal ("NZ") layout a cube matrix unit reads its operands in (Ascend's
// FRACTAL_NZ): a [rows, cols] matrix, cols contiguous (for a GEMM operand, cols is K), is
// cut into fractals of M0 = 16 rows by K0 = 32 bytes / element size columns (int8 32,
// fp16 16, fp32 8), so that one fractal is 512 bytes and each of its rows one 32-byte run.
//
// Order (the exact one): fractals column-of-blocks-major ("N": down a column of fractals,
// then the next column), each fractal row-major ("Z"). Element (r, c) of a matrix with
// M1 = ceil(rows / 16) fractal rows lives at
//     ((c / K0) · M1 + r / 16) · (16 · K0) + (r % 16) · K0 + c % K0.
// Rows and cols are padded up to whole fractals; the padding is zero. Equivalently, the
// packed array is the 4-D array [K1][M1][16][K0], K1 = ceil(cols / K0), innermost last.
#pragma once

#include <cstdint>
#include <vector>

namespace npukit::layouts {

constexpr int64_t kNzFractalRows = 16;   // M0
constexpr int64_t kNzFractalRowBytes = 32;  // K0 · element size

struct NzShape {
  int64_t rows = 0, cols = 0;  // logical
  int64_t k0 = 0;              // fractal columns: kNzFractalRowBytes / element size
  int64_t row_blocks = 0;      // M1 = ceil(rows / 16)
  int64_t col_blocks = 0;      // K1 = ceil(cols / k0)

  int64_t padded_rows() const { return row_blocks * kNzFractalRows; }
  int64_t padded_cols() const { return col_blocks * k0; }
  int64_t elements() const { return padded_rows() * padded_cols(); }
  // Where element (r, c) lives in the packed array (formula above).
  int64_t offset(int64_t r, int64_t c) const {
    return ((c / k0) * row_blocks + r / kNzFractalRows) * (kNzFractalRows * k0) + (r % kNzFractalRows) * k0 + c % k0;
  }
};

// The NZ shape of a [rows, cols] matrix of elements of `element_bytes` (1, 2 or 4).
// Throws std::invalid_argument naming the argument for a negative extent or another size.
NzShape nz_shape(int64_t rows, int64_t cols, int64_t element_bytes);

// Packs row-major src[rows][cols] (row r at src + r · cols) into NZ order; padding zero.
// fp16 travels as its bits (uint16_t): packing only moves elements.
std::vector<int8_t> pack_nz(const int8_t* src, int64_t rows, int64_t cols);
std::vector<uint16_t> pack_nz(const uint16_t* src, int64_t rows, int64_t cols);
std::vector<float> pack_nz(const float* src, int64_t rows, int64_t cols);

// The inverse: row-major [rows, cols] from an NZ array of nz_shape(rows, cols, ·).elements()
// elements. Throws std::invalid_argument when `nz` has another size.
std::vector<int8_t> unpack_nz(const std::vector<int8_t>& nz, int64_t rows, int64_t cols);
std::vector<uint16_t> unpack_nz(const std::vector<uint16_t>& nz, int64_t rows, int64_t cols);
std::vector<float> unpack_nz(const std::vector<float>& nz, int64_t rows, int64_t cols);

}  // namespace npukit::layouts
