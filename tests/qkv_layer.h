// The small fp32 GQA layer the qkv_attention tests run: its tensors and parameters.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "runtime/op_spec.h"

namespace npukit {

// A small GQA layer: T tokens, D = 16, Hq = 4, Hkv = 2, Dh = 8, S_max positions, fp32.
struct Layer {
  int64_t T, S, D = 16, Hq = 4, Hkv = 2, Dh = 8;
  std::vector<float> x, w_qkv, w_o, k, v, y;
  Layer(int64_t T_, int64_t S_) : T(T_), S(S_) {
    auto fill = [](std::vector<float>& a, size_t n, float scale, int seed) {
      a.resize(n);
      for (size_t i = 0; i < n; ++i) a[i] = scale * std::sin(0.7f * float(i) + float(seed));
    };
    fill(x, T * D, 1.0f, 1);
    fill(w_qkv, (Hq + 2 * Hkv) * Dh * D, 0.25f, 2);
    fill(w_o, D * Hq * Dh, 0.2f, 3);
    fill(k, Hkv * S * Dh, 1.0f, 4);
    fill(v, Hkv * S * Dh, 1.0f, 5);
    y.assign(T * D, 0.0f);
  }
  TensorMap views() {
    return {{"x", {x.data(), DType::float32, {T, D}, {}}},
            {"w_qkv", {w_qkv.data(), DType::float32, {(Hq + 2 * Hkv) * Dh, D}, {}}},
            {"w_o", {w_o.data(), DType::float32, {D, Hq * Dh}, {}}},
            {"k_cache", {k.data(), DType::float32, {Hkv, S, Dh}, {}}},
            {"v_cache", {v.data(), DType::float32, {Hkv, S, Dh}, {}}},
            {"y", {y.data(), DType::float32, {T, D}, {}}}};
  }
  std::map<std::string, std::string> params(int64_t pos) const {
    return {{"pos", std::to_string(pos)}, {"heads", "4"}, {"kv_heads", "2"}, {"head_dim", "8"}, {"style", "half"}};
  }
};

}  // namespace npukit
