// Checks the golden case-generator tests share: bit-identical arrays (determinism),
// values representable in their dtype, and the set of sizes a class covers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

#include "golden/array.h"
#include "golden/cases.h"
#include "golden/half.h"

namespace npukit::golden {

inline bool same_bits(const Array& a, const Array& b) {
  return a.dtype == b.dtype && a.shape == b.shape && a.values.size() == b.values.size() &&
         std::memcmp(a.values.data(), b.values.data(), a.values.size() * sizeof(double)) == 0;
}

inline bool representable(double v, DType t) { return std::isnan(v) || round_to_dtype(v, t) == v; }

inline std::set<int64_t> dim_values(const std::vector<Case>& cases, const std::string& dim) {
  std::set<int64_t> s;
  for (const Case& c : cases) s.insert(c.dims.at(dim));
  return s;
}

inline bool contains_all(const std::set<int64_t>& have, std::initializer_list<int64_t> want) {
  return std::all_of(want.begin(), want.end(), [&](int64_t v) { return have.count(v) > 0; });
}

}  // namespace npukit::golden
