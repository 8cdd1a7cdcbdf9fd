// Checks the golden case-generator tests share: two calls give the same cases
// (determinism), values representable in their dtype, and the set of sizes a class covers.
#pragma once

#include <gtest/gtest.h>

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

// Two calls of a case generator give the same, non-empty list: names (each unique), dims,
// params and every input bit for bit.
inline void expect_same_cases(const std::vector<Case>& a, const std::vector<Case>& b) {
  ASSERT_FALSE(a.empty());
  ASSERT_EQ(a.size(), b.size());
  std::set<std::string> names;
  for (size_t k = 0; k < a.size(); ++k) {
    SCOPED_TRACE(a[k].name);
    EXPECT_TRUE(names.insert(a[k].name).second) << "duplicate name";
    EXPECT_EQ(a[k].name, b[k].name);
    EXPECT_EQ(a[k].dims, b[k].dims);
    EXPECT_EQ(a[k].params, b[k].params);
    ASSERT_EQ(a[k].inputs.size(), b[k].inputs.size());
    for (const auto& [name, arr] : a[k].inputs) {
      ASSERT_EQ(b[k].inputs.count(name), 1u) << name;
      EXPECT_TRUE(same_bits(arr, b[k].inputs.at(name))) << name;
    }
  }
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
