// Seeds and a small PRNG for golden inputs. No std:: distributions: their output differs
// between standard libraries. next/uniform/integer are exact integer arithmetic, so they
// are bitwise stable everywhere; normal() also needs libm's log/cos/sqrt, whose last bit
// may differ between libms (rounding the draw to fp32/fp16 hides almost all of that).
#pragma once

#include <cstdint>
#include <string_view>

namespace npukit::golden {

// Seed of one chunk of one case: FNV-1a of op, mixed with case_index and chunk through
// splitmix64. Pure integer arithmetic, stable across platforms and releases.
uint64_t case_seed(std::string_view op, uint64_t case_index, uint64_t chunk);

// xoshiro256**, state expanded from the seed by splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed);

  uint64_t next();
  double uniform(double lo, double hi);      // [lo, hi), 53 random bits
  double normal(double mean, double stddev);  // Box–Muller, one draw per pair of uniforms
  int64_t integer(int64_t lo, int64_t hi);    // [lo, hi] inclusive, unbiased; needs lo <= hi

 private:
  uint64_t s_[4];
};

}  // namespace npukit::golden
