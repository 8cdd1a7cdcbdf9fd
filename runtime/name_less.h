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

// The entry of `map` (keyed by std::string) named `name`, or map.end(): a scan that compares
// lengths first. These maps hold a few names, and the scan, which compares the characters
// of about one key, took 2.7 ns where map::find took 13-15 ns (a rope call's "head_dim"
// among its three dims, Zen 4); a decode-step call makes 10-20 lookups.
template <class Map>
typename Map::const_iterator find_name(const Map& map, std::string_view name) {
  for (auto it = map.begin(); it != map.end(); ++it) {
    const auto& key = it->first;
    if (key.size() != name.size()) continue;
    size_t i = 0;
    while (i < name.size() && key[i] == name[i]) ++i;
    if (i == name.size()) return it;
  }
  return map.end();
}

}  // namespace npukit
