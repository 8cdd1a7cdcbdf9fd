// Golden {{op}} in double, and its input classes (golden/{{op}}_cases.cpp): the cases the
// gate runs a kernel on and checks against the reference. Plain C++: a reference that
// shares code with the kernel it checks checks nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x and y of [rows, cols]. Say here what it computes and its NaN/Inf contract.
void {{op}}(const double* x, int64_t rows, int64_t cols, double alpha, double* y);

// The cases of one input class for x of `dtype` (golden/{{op}}_cases.cpp says which).
std::vector<Case> {{op}}_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden
