// A tensor's shape or strides, outermost first, held inline: run functions build tensor
// views on every call, and a heap-backed shape made each of them a malloc (issue 13's
// "no heap allocation on the hot path"). The interface is the part of std::vector that
// shapes use.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "runtime/error.h"

namespace npukit {

class Dims {
 public:
  // More than any op's tensors have (4); DLPack, .npy and the gate refuse a tensor with more
  // before they build its view, naming it.
  static constexpr size_t kMaxRank = 8;

  using value_type = int64_t;
  using iterator = int64_t*;
  using const_iterator = const int64_t*;

  Dims() = default;
  Dims(std::initializer_list<int64_t> v) { assign(v.begin(), v.end()); }
  Dims(const int64_t* first, const int64_t* last) { assign(first, last); }
  Dims(const std::vector<int64_t>& v) { assign(v.data(), v.data() + v.size()); }  // NOLINT: a shape is a shape
  // n copies of `value`.
  Dims(size_t n, int64_t value) { resize(n, value); }

  template <class It>
  void assign(It first, It last) {
    const auto n = static_cast<size_t>(std::distance(first, last));
    check_rank(n);
    std::copy(first, last, v_);
    n_ = static_cast<uint8_t>(n);
  }
  void resize(size_t n, int64_t value = 0) {
    check_rank(n);
    for (size_t i = n_; i < n; ++i) v_[i] = value;
    n_ = static_cast<uint8_t>(n);
  }
  void push_back(int64_t v) {
    check_rank(size_t(n_) + 1);
    v_[n_++] = v;
  }
  void clear() { n_ = 0; }

  size_t size() const { return n_; }
  bool empty() const { return n_ == 0; }
  int64_t* data() { return v_; }
  const int64_t* data() const { return v_; }
  int64_t* begin() { return v_; }
  int64_t* end() { return v_ + n_; }
  const int64_t* begin() const { return v_; }
  const int64_t* end() const { return v_ + n_; }
  int64_t& operator[](size_t i) { return v_[i]; }
  int64_t operator[](size_t i) const { return v_[i]; }
  int64_t& front() { return v_[0]; }
  int64_t front() const { return v_[0]; }
  int64_t& back() { return v_[n_ - 1]; }
  int64_t back() const { return v_[n_ - 1]; }
  int64_t at(size_t i) const {
    if (i >= n_) throw std::out_of_range("Dims::at: index past the rank");
    return v_[i];
  }
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  friend bool operator==(const Dims& a, const Dims& b) { return std::equal(a.begin(), a.end(), b.begin(), b.end()); }
  friend bool operator!=(const Dims& a, const Dims& b) { return !(a == b); }

 private:
  // The entry points (dlpack_view, npy, the gate) refuse such a tensor first, naming it;
  // this is the backstop for any path that does not.
  static void check_rank(size_t n) {
    if (n > kMaxRank) fail(Errc::invalid_argument, "a tensor has {} dimensions; npukit's have at most {}", n, kMaxRank);
  }

  int64_t v_[kMaxRank];
  uint8_t n_ = 0;
};

}  // namespace npukit
