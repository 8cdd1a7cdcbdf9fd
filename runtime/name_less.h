// The order of maps keyed by short names (tensors, dimensions, parameters) that kernels
// look up on every call: std::string's own order, compared inline and by any string type,
// so a lookup builds no std::string and calls no memcmp.
#pragma once

#include <cstddef>
#include <string_view>

namespace npukit {

struct NameLess {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const noexcept {
    const size_t n = a.size() < b.size() ? a.size() : b.size();
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[i]);
    }
    return a.size() < b.size();
  }
};

}  // namespace npukit
