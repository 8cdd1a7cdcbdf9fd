// A host tensor for golden inputs and outputs, and deterministic fills for it.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "npukit/dtype.h"

namespace npukit::golden {

// Values are doubles that are exactly representable in dtype (every fill rounds through
// round_to_dtype), so writing them into a typed buffer loses nothing. Row-major.
struct Array {
  DType dtype = DType::float32;
  std::vector<int64_t> shape;
  std::vector<double> values;

  int64_t size() const;  // product of shape; 1 for a scalar (empty shape)
};

// The largest |value| over the finite values (0 when there are none): the scale that
// tolerances with an absolute part measured in roundings of the inputs multiply.
double max_abs_finite(const Array& a);

// Elements are generated in chunks of kFillChunk; chunk c draws from
// Rng(case_seed(op, case_index, c)). The result is therefore the same whether the chunks
// are filled serially or by any number of threads.
inline constexpr int64_t kFillChunk = 65536;

Array make_normal(std::string_view op, uint64_t case_index, DType dtype,
                  std::vector<int64_t> shape, double mean, double stddev);
Array make_uniform(std::string_view op, uint64_t case_index, DType dtype,
                   std::vector<int64_t> shape, double lo, double hi);
Array make_integers(std::string_view op, uint64_t case_index, DType dtype,
                    std::vector<int64_t> shape, int64_t lo, int64_t hi);  // inclusive
Array make_constant(DType dtype, std::vector<int64_t> shape, double v);

}  // namespace npukit::golden
