// The value of an integer or boolean Halide Expr once the names in `at` are bound (for the
// tests of lowering passes, which read offsets, extents and guards out of IR). Bound values
// may name other bound names (lets naming lets); a condition gives 1 or 0. An Expr that does
// not reduce to a constant fails the test and gives -1.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "Halide.h"

namespace npukit {

inline int64_t evaluate(const Halide::Expr& e, const std::map<std::string, Halide::Expr>& at) {
  using namespace Halide::Internal;
  Halide::Expr value = e;
  for (int depth = 0; depth < 8; ++depth) value = substitute(at, value);
  value = simplify(value);
  if (is_const_one(value) || is_const_zero(value)) return is_const_one(value);
  const int64_t* i = as_const_int(value);
  EXPECT_NE(i, nullptr) << value;
  return i ? *i : -1;
}

}  // namespace npukit
