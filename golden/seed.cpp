#include "golden/seed.h"

#include <cassert>
#include <cmath>

namespace npukit::golden {
namespace {

constexpr uint64_t kGamma = 0x9e3779b97f4a7c15ULL;

uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// 53 random bits as a double in [0, 1).
double unit(uint64_t r) { return static_cast<double>(r >> 11) * 0x1p-53; }

}  // namespace

uint64_t case_seed(std::string_view op, uint64_t case_index, uint64_t chunk) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : op) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  h = mix64(h + kGamma);
  h = mix64(h ^ (case_index + kGamma));
  return mix64(h ^ (chunk * kGamma + 1));
}

Rng::Rng(uint64_t seed) {
  for (uint64_t& s : s_) {
    seed += kGamma;
    s = mix64(seed);
  }
}

uint64_t Rng::next() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform(double lo, double hi) { return lo + (hi - lo) * unit(next()); }

double Rng::normal(double mean, double stddev) {
  const double u1 = 1.0 - unit(next());  // (0, 1]: keeps log() finite
  const double u2 = unit(next());
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return mean + stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

int64_t Rng::integer(int64_t lo, int64_t hi) {
  assert(lo <= hi);
  const uint64_t range = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo) + 1;
  if (range == 0) return static_cast<int64_t>(next());  // the whole int64 range
  // Reject the low 2^64 mod range values so every residue is equally likely.
  const uint64_t threshold = (0 - range) % range;
  uint64_t r;
  do {
    r = next();
  } while (r < threshold);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % range);
}

}  // namespace npukit::golden
