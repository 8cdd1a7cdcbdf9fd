// Timing helpers every bench may use, with no dependency on the kit: the median of
// samples, and the wall time per call of a batch of calls too short to time one by one
// (the call-overhead benches: c_api_bench, torch_op_bench).
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace npukit::bench {

// The median of `v` (reordered).
inline double median_of(std::vector<double>& v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

// Nanoseconds per call of `f`, over `calls` calls back to back.
template <class F>
double ns_per_call(int calls, F&& f) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / calls;
}

}  // namespace npukit::bench
