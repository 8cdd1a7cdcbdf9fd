// layouts/nz: the fractal (NZ) order a cube unit reads, checked against positions worked
// out by hand from the documented order, and pack/unpack proven inverse on odd shapes for
// int8, fp16 (as bits) and fp32, with every padding element zero.
#include <gtest/gtest.h>

#include <random>
#include <set>
#include <stdexcept>
#include <vector>

#include "layouts/nz.h"

namespace npukit::layouts {
namespace {

// int8 [17, 33]: two fractal rows (M1 = 2) by two fractal columns (K1 = 2), each fractal
// 16 x 32 = 512 B. Positions from the order "fractal columns major, fractals down a
// column, each fractal row-major".
TEST(NzLayout, PositionsFollowTheDocumentedOrder) {
  const NzShape s = nz_shape(17, 33, 1);
  EXPECT_EQ(s.k0, 32);
  EXPECT_EQ(s.row_blocks, 2);
  EXPECT_EQ(s.col_blocks, 2);
  EXPECT_EQ(s.elements(), 4 * 512);
  EXPECT_EQ(s.offset(0, 0), 0);
  EXPECT_EQ(s.offset(0, 31), 31);     // one fractal row: 32 contiguous bytes
  EXPECT_EQ(s.offset(1, 0), 32);      // the next row of the same fractal
  EXPECT_EQ(s.offset(15, 31), 511);   // the fractal's last element
  EXPECT_EQ(s.offset(16, 0), 512);    // the fractal below comes next (down the column) ...
  EXPECT_EQ(s.offset(0, 32), 1024);   // ... then the next column of fractals
  EXPECT_EQ(s.offset(16, 32), 1536);
  // fp16: K0 = 16 columns of 2 B; fp32: K0 = 8 of 4 B. A fractal row is 32 B in each.
  EXPECT_EQ(nz_shape(17, 33, 2).k0, 16);
  EXPECT_EQ(nz_shape(17, 33, 2).offset(0, 16), 2 * 16 * 16);  // M1 = 2 fractals of 256 elements
  EXPECT_EQ(nz_shape(17, 33, 4).k0, 8);
  EXPECT_EQ(nz_shape(17, 33, 4).offset(3, 9), (1 * 2 + 0) * 128 + 3 * 8 + 1);
}

// Every fractal occupies one contiguous range of 16·K0 elements, and distinct elements
// distinct positions.
TEST(NzLayout, EachFractalIsContiguous) {
  for (int64_t eb : {1, 2, 4}) {
    const NzShape s = nz_shape(37, 45, eb);
    const int64_t fractal = kNzFractalRows * s.k0;
    EXPECT_EQ(fractal * eb, 512);
    std::set<int64_t> seen;
    for (int64_t r = 0; r < s.padded_rows(); ++r) {
      for (int64_t c = 0; c < s.padded_cols(); ++c) {
        const int64_t o = s.offset(r, c);
        EXPECT_TRUE(seen.insert(o).second) << "(" << r << ", " << c << ") collides at " << o;
        const int64_t block = (c / s.k0) * s.row_blocks + r / kNzFractalRows;
        EXPECT_GE(o, block * fractal);
        EXPECT_LT(o, (block + 1) * fractal);
      }
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), s.elements());
  }
}

template <class T>
void check_round_trip(int64_t rows, int64_t cols, std::mt19937& rng) {
  std::vector<T> m(static_cast<size_t>(rows * cols));
  for (T& v : m) v = static_cast<T>(1 + rng() % 100);  // never zero: padding is told apart
  const std::vector<T> nz = pack_nz(m.data(), rows, cols);
  const NzShape s = nz_shape(rows, cols, sizeof(T));
  ASSERT_EQ(static_cast<int64_t>(nz.size()), s.elements());
  std::vector<bool> real(nz.size(), false);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      real[static_cast<size_t>(s.offset(r, c))] = true;
      ASSERT_EQ(nz[static_cast<size_t>(s.offset(r, c))], m[static_cast<size_t>(r * cols + c)]);
    }
  }
  for (size_t i = 0; i < nz.size(); ++i)
    if (!real[i]) ASSERT_EQ(nz[i], T(0)) << "padding element " << i << " of " << rows << "x" << cols;
  EXPECT_EQ(unpack_nz(nz, rows, cols), m) << rows << "x" << cols;
  // And the other way round: an NZ array with zero padding survives unpack then pack.
  EXPECT_EQ(pack_nz(unpack_nz(nz, rows, cols).data(), rows, cols), nz);
}

TEST(NzLayout, PackUnpackAreInverseOnOddShapes) {
  std::mt19937 rng(5);
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {1, 4096}, {15, 31}, {16, 32}, {17, 33},
                                                {33, 7},  {100, 65}, {0, 5}, {5, 0}};
  for (auto [rows, cols] : shapes) {
    check_round_trip<int8_t>(rows, cols, rng);
    check_round_trip<uint16_t>(rows, cols, rng);  // fp16 bits
    check_round_trip<float>(rows, cols, rng);
  }
}

TEST(NzLayout, ErrorsNameTheArgument) {
  auto message = [](auto f) {
    try {
      f();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { nz_shape(-1, 4, 1); }), "nz_shape: rows = -1: must not be negative");
  EXPECT_EQ(message([] { nz_shape(4, -2, 1); }), "nz_shape: cols = -2: must not be negative");
  EXPECT_EQ(message([] { nz_shape(4, 4, 8); }), "nz_shape: element_bytes = 8: must be 1, 2 or 4 (int8, fp16, fp32)");
  EXPECT_EQ(message([] { unpack_nz(std::vector<int8_t>(100), 2, 3); }),
            "unpack_nz: nz has 100 elements, but a 2x3 matrix packs into 512");
}

}  // namespace
}  // namespace npukit::layouts
