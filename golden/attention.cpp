#include "golden/attention.h"

#include "golden/half.h"
#include "golden/per_token_quant.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace npukit::golden {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("golden::attention: " + what);
}

void require_positive(const char* name, int64_t v) {
  if (v < 1) fail(fmt::format("{} = {} must be >= 1", name, v));
}

void check_heads(const char* hq_name, int64_t hq, const char* hkv_name, int64_t hkv) {
  require_positive(hq_name, hq);
  require_positive(hkv_name, hkv);
  if (hq % hkv != 0) {
    fail(fmt::format("{} = {} is not a multiple of {} = {}", hq_name, hq, hkv_name, hkv));
  }
}

void check_mask(const double* mask, int64_t T, int64_t S_max) {
  if (mask == nullptr) return;
  for (int64_t i = 0; i < T * S_max; ++i) {
    const double m = mask[i];
    if (std::isnan(m) || m == kInf) {
      fail(fmt::format("mask[{}, {}] = {} must be finite or -inf", i / S_max, i % S_max, number_text(m)));
    }
  }
}

// o[T, rows] = a[T, cols] · wᵀ with w [rows, cols], each sum in order c.
void project(const double* a, const double* w, int64_t T, int64_t rows, int64_t cols,
             double* out) {
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 0;
      for (int64_t c = 0; c < cols; ++c) acc += a[t * cols + c] * w[r * cols + c];
      out[t * rows + r] = acc;
    }
  }
}

int64_t integer_param(const Case& c, const std::string& name, int64_t fallback) {
  const auto it = c.params.find(name);
  if (it == c.params.end()) return fallback;
  size_t used = 0;
  int64_t v = 0;
  try {
    v = std::stoll(it->second, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != it->second.size()) {
    fail(fmt::format("parameter {}='{}' is not an integer", name, it->second));
  }
  return v;
}

}  // namespace

void attention_core(const double* q, const double* k_cache, const double* v_cache,
                    const int64_t* positions, const double* mask, int64_t T, int64_t Hq,
                    int64_t Hkv, int64_t Dh, int64_t S_max, double* o) {
  if (T < 0) fail(fmt::format("T = {} must be >= 0", T));
  check_heads("Hq", Hq, "Hkv", Hkv);
  require_positive("Dh", Dh);
  require_positive("S_max", S_max);
  for (int64_t t = 0; t < T; ++t) {
    if (positions[t] < 0 || positions[t] >= S_max) {
      fail(fmt::format("positions[{}] = {} outside [0, S_max = {})", t, positions[t], S_max));
    }
  }
  check_mask(mask, T, S_max);

  const int64_t group = Hq / Hkv;
  const double scale = 1.0 / std::sqrt(static_cast<double>(Dh));
  std::vector<int64_t> live;
  std::vector<double> s, acc(static_cast<size_t>(Dh));
  for (int64_t t = 0; t < T; ++t) {
    live.clear();
    for (int64_t j = 0; j <= positions[t]; ++j) {
      if (mask == nullptr || mask[t * S_max + j] != -kInf) live.push_back(j);
    }
    for (int64_t h = 0; h < Hq; ++h) {
      const int64_t g = h / group;
      const double* qr = q + (t * Hq + h) * Dh;
      double* orow = o + (t * Hq + h) * Dh;
      if (live.empty()) {
        for (int64_t d = 0; d < Dh; ++d) orow[d] = 0;
        continue;
      }
      s.assign(live.size(), 0);
      bool nan = false;
      for (size_t i = 0; i < live.size(); ++i) {
        const int64_t j = live[i];
        const double* kr = k_cache + (g * S_max + j) * Dh;
        double dot = 0;
        for (int64_t d = 0; d < Dh; ++d) dot += qr[d] * kr[d];
        double sj = dot * scale;
        if (mask != nullptr) sj = sj + mask[t * S_max + j];
        nan |= std::isnan(sj);
        s[i] = sj;
      }
      if (nan) {
        for (int64_t d = 0; d < Dh; ++d) orow[d] = kNaN;
        continue;
      }
      double m = -kInf;
      for (double sj : s) m = sj > m ? sj : m;
      double l = 0;
      for (double& sj : s) {
        sj = std::exp(sj - m);  // now e_j
        l += sj;
      }
      acc.assign(static_cast<size_t>(Dh), 0);
      for (size_t i = 0; i < live.size(); ++i) {
        const double* vr = v_cache + (g * S_max + live[i]) * Dh;
        for (int64_t d = 0; d < Dh; ++d) acc[static_cast<size_t>(d)] += s[i] * vr[d];
      }
      for (int64_t d = 0; d < Dh; ++d) orow[d] = acc[static_cast<size_t>(d)] / l;
    }
  }
}

void qkv_attention(const double* x, const double* w_qkv, const double* w_o, double* k_cache,
                   double* v_cache, const double* mask, int64_t T, int64_t D, int64_t S_max,
                   const QkvAttentionParams& p, double* y, const QkvInt8Scales* int8) {
  if (T < 0) fail(fmt::format("T = {} must be >= 0", T));
  require_positive("D", D);
  require_positive("S_max", S_max);
  check_heads("heads", p.heads, "kv_heads", p.kv_heads);
  if (p.head_dim < 2 || p.head_dim % 2 != 0) {
    fail(fmt::format("head_dim = {} must be even and >= 2 (RoPE pairs)", p.head_dim));
  }
  if (p.pos < 0) fail(fmt::format("pos = {} must be >= 0", p.pos));
  if (p.pos > S_max - T) {
    fail(fmt::format("pos + T = {} + {} exceeds S_max = {} (position {} is not in the cache)", p.pos, T, S_max,
                     p.pos + T - 1));
  }
  if (!(std::isfinite(p.theta) && p.theta >= 1)) {
    fail(fmt::format("theta = {} must be finite and >= 1", number_text(p.theta)));
  }
  check_mask(mask, T, S_max);

  const int64_t Hq = p.heads, Hkv = p.kv_heads, Dh = p.head_dim;
  const int64_t rows = (Hq + 2 * Hkv) * Dh;
  const auto n = [](int64_t v) { return static_cast<size_t>(v); };

  // 1. Projection, then the split into q, k, v (per token: Hq·Dh, Hkv·Dh, Hkv·Dh columns).
  std::vector<double> qkv(n(T * rows));
  if (int8 != nullptr) {
    project_int8(x, w_qkv, int8->w_qkv_scale, T, rows, D, qkv.data());
  } else {
    project(x, w_qkv, T, rows, D, qkv.data());
  }
  std::vector<double> q(n(T * Hq * Dh)), k(n(T * Hkv * Dh)), v(n(T * Hkv * Dh));
  for (int64_t t = 0; t < T; ++t) {
    const double* row = qkv.data() + t * rows;
    for (int64_t i = 0; i < Hq * Dh; ++i) q[n(t * Hq * Dh + i)] = row[i];
    for (int64_t i = 0; i < Hkv * Dh; ++i) {
      k[n(t * Hkv * Dh + i)] = row[Hq * Dh + i];
      v[n(t * Hkv * Dh + i)] = row[(Hq + Hkv) * Dh + i];
    }
  }

  // 2. RoPE on q and k at their absolute positions.
  std::vector<int64_t> positions(n(T));
  for (int64_t t = 0; t < T; ++t) positions[n(t)] = p.pos + t;
  rope(q.data(), positions.data(), T, Hq, Dh, Dh, p.theta, p.style, q.data());
  rope(k.data(), positions.data(), T, Hkv, Dh, Dh, p.theta, p.style, k.data());

  // 3. The cache update, before any read.
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t g = 0; g < Hkv; ++g) {
      for (int64_t d = 0; d < Dh; ++d) {
        const size_t at = n((g * S_max + p.pos + t) * Dh + d);
        k_cache[at] = k[n((t * Hkv + g) * Dh + d)];
        v_cache[at] = v[n((t * Hkv + g) * Dh + d)];
        if (int8 != nullptr) {
          k_cache[at] = round_to_dtype(k_cache[at], int8->cache_dtype);
          v_cache[at] = round_to_dtype(v_cache[at], int8->cache_dtype);
        }
      }
    }
  }

  // 4. Attention over the cache; 5. the output projection.
  std::vector<double> o(n(T * Hq * Dh));
  attention_core(q.data(), k_cache, v_cache, positions.data(), mask, T, Hq, Hkv, Dh, S_max,
                 o.data());
  if (int8 != nullptr) {
    project_int8(o.data(), w_o, int8->w_o_scale, T, D, Hq * Dh, y);
  } else {
    project(o.data(), w_o, T, D, Hq * Dh, y);
  }
}

QkvAttentionParams qkv_attention_params(const Case& c) {
  QkvAttentionParams p;
  p.pos = integer_param(c, "pos", p.pos);
  p.heads = integer_param(c, "heads", p.heads);
  p.kv_heads = integer_param(c, "kv_heads", p.kv_heads);
  p.head_dim = integer_param(c, "head_dim", p.head_dim);
  if (const auto it = c.params.find("theta"); it != c.params.end()) {
    size_t used = 0;
    try {
      p.theta = std::stod(it->second, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != it->second.size()) {
      fail(fmt::format("parameter theta='{}' is not a number", it->second));
    }
  }
  if (const auto it = c.params.find("style"); it != c.params.end()) {
    const std::optional<RopeStyle> s = rope_style_from_name(it->second);
    if (!s) fail(fmt::format("parameter style='{}' is not one of interleaved, half", it->second));
    p.style = *s;
  }
  return p;
}

namespace {

std::vector<int64_t> positions_of(const Array& a) {
  std::vector<int64_t> p;
  p.reserve(a.values.size());
  for (double v : a.values) p.push_back(static_cast<int64_t>(v));
  return p;
}

const double* mask_of(const Case& c) {
  const auto it = c.inputs.find("mask");
  return it == c.inputs.end() ? nullptr : it->second.values.data();
}

}  // namespace

std::vector<double> attention_reference(const Case& c) {
  const int64_t T = c.dims.at("T"), Hq = c.dims.at("Hq"), Hkv = c.dims.at("Hkv"),
                Dh = c.dims.at("Dh"), S_max = c.dims.at("S_max");
  const std::vector<int64_t> positions = positions_of(c.inputs.at("positions"));
  std::vector<double> o(static_cast<size_t>(T * Hq * Dh));
  attention_core(c.inputs.at("q").values.data(), c.inputs.at("k_cache").values.data(),
                 c.inputs.at("v_cache").values.data(), positions.data(), mask_of(c), T, Hq, Hkv,
                 Dh, S_max, o.data());
  return o;
}

QkvAttentionResult qkv_attention_reference(const Case& c) {
  const int64_t T = c.dims.at("T"), D = c.dims.at("D"), S_max = c.dims.at("S_max");
  QkvAttentionResult r;
  r.k_cache = c.inputs.at("k_cache").values;
  r.v_cache = c.inputs.at("v_cache").values;
  r.y.resize(static_cast<size_t>(T * D));
  QkvInt8Scales int8;
  const auto sq = c.inputs.find("w_qkv_scale"), so = c.inputs.find("w_o_scale");
  if (sq != c.inputs.end() && so != c.inputs.end()) {
    int8.w_qkv_scale = sq->second.values.data();
    int8.w_o_scale = so->second.values.data();
    int8.cache_dtype = c.inputs.at("k_cache").dtype;
  }
  qkv_attention(c.inputs.at("x").values.data(), c.inputs.at("w_qkv").values.data(),
                c.inputs.at("w_o").values.data(), r.k_cache.data(), r.v_cache.data(),
                mask_of(c), T, D, S_max, qkv_attention_params(c), r.y.data(),
                int8.w_qkv_scale != nullptr ? &int8 : nullptr);
  return r;
}

}  // namespace npukit::golden
