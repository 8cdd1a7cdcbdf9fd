// Typed storage for golden arrays: doubles in, the dtype's bytes out, and back.
#pragma once

#include <cstdint>
#include <vector>

#include "npukit/dtype.h"

namespace npukit::gate {

// Writes `values` (already representable in `dtype`) as `dtype` elements into `dst`.
void encode(const std::vector<double>& values, DType dtype, void* dst);

// Reads `n` elements of `dtype` from `src` as doubles.
std::vector<double> decode(const void* src, DType dtype, int64_t n);

}  // namespace npukit::gate
