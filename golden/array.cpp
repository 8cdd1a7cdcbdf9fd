#include "golden/array.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "golden/half.h"
#include "golden/seed.h"

namespace npukit::golden {
namespace {

int64_t element_count(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::invalid_argument("golden::Array: negative dimension");
    n *= d;
  }
  return n;
}

template <typename Draw>
Array fill(std::string_view op, uint64_t case_index, DType dtype, std::vector<int64_t> shape,
           Draw draw) {
  Array a{dtype, std::move(shape), {}};
  const int64_t n = element_count(a.shape);
  a.values.resize(static_cast<size_t>(n));
  for (int64_t begin = 0, chunk = 0; begin < n; begin += kFillChunk, ++chunk) {
    Rng rng(case_seed(op, case_index, static_cast<uint64_t>(chunk)));
    const int64_t end = std::min(n, begin + kFillChunk);
    for (int64_t i = begin; i < end; ++i) {
      a.values[static_cast<size_t>(i)] = round_to_dtype(draw(rng), dtype);
    }
  }
  return a;
}

}  // namespace

int64_t Array::size() const { return element_count(shape); }

double max_abs_finite(const Array& a) {
  double m = 0;
  for (double v : a.values) {
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  }
  return m;
}

Array make_normal(std::string_view op, uint64_t case_index, DType dtype,
                  std::vector<int64_t> shape, double mean, double stddev) {
  return fill(op, case_index, dtype, std::move(shape),
              [=](Rng& r) { return r.normal(mean, stddev); });
}

Array make_uniform(std::string_view op, uint64_t case_index, DType dtype,
                   std::vector<int64_t> shape, double lo, double hi) {
  return fill(op, case_index, dtype, std::move(shape),
              [=](Rng& r) { return r.uniform(lo, hi); });
}

Array make_integers(std::string_view op, uint64_t case_index, DType dtype,
                    std::vector<int64_t> shape, int64_t lo, int64_t hi) {
  if (lo > hi) throw std::invalid_argument("golden::make_integers: lo > hi");
  return fill(op, case_index, dtype, std::move(shape),
              [=](Rng& r) { return static_cast<double>(r.integer(lo, hi)); });
}

Array make_constant(DType dtype, std::vector<int64_t> shape, double v) {
  Array a{dtype, std::move(shape), {}};
  a.values.assign(static_cast<size_t>(element_count(a.shape)), round_to_dtype(v, dtype));
  return a;
}

}  // namespace npukit::golden
