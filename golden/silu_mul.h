// Golden SiLU-and-multiply in double: y[t, f] = silu(gate_up[t, 0, f]) * gate_up[t, 1, f],
// silu(g) = g / (1 + e^-g).
// Then (below) its input classes, the cases the gate runs a kernel
// on and checks against the reference, and the gate's hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// silu in double, with its limits as the contract: silu(-inf) = -0 (the formula would give
// -inf / inf = NaN), silu(+inf) = +inf, silu(NaN) = NaN; for g < -745, e^-g overflows
// double and g / inf = -0, which is also the limit.
double silu(double g);

// Row-major gate_up of [tokens, 2, ffn] (gate, then up, per token: a fused [tokens, 2·ffn]
// projection output), y of [tokens, ffn]. The product is plain IEEE: -0 · Inf and
// Inf · 0 are NaN, NaN in either half gives NaN.
void silu_mul(const double* gate_up, int64_t tokens, int64_t ffn, double* y);


// The cases of one input class for gate_up of `dtype` (float16 and float32 get their own
// overflow cases; float64 uses float32's). Integer dtypes: empty. Drawn from
// case_seed("silu_mul/<class>/<stream>", i, chunk) (golden/case_builder.h).
//
// Dims "tokens", "halves" (always 2), "ffn"; input "gate_up" [tokens, 2, ffn]. Unless a
// case says otherwise the gate is N(0, 3²) (both sides of silu's bend) and up is N(0, 1).
//   normal:   decode and prefill-like shapes, ffn up to 11008.
//   boundary: ffn 1, 7, 15, 16, 17, 2047, 2048, 2049 against a few token counts; gates of
//             ±0 and ±1e-30 (silu(g) = g/2), gates in [-90, -85] around fp32's flush of
//             e^g (silu ~ -1e-36), large gates in [20, 100] (silu(g) = g).
//   overflow: float32: gates of ±[1e30, 3.4e38] (silu = g or -0), gates and ups of
//             ±[1e19, 1e20] whose products overflow to ±Inf, gates of -100 and -1000
//             (silu = -0, not NaN). float16: gates and ups near ±6e4 (products to ±Inf),
//             gates in [-20, -10] (fp16-subnormal outputs).
//   nan_inf:  NaN in the gate and in up; gates of +Inf and -Inf against finite ups, zero
//             ups and Inf ups; Inf ups against zero gates (silu(0) · Inf = NaN).
//   shape:    odd ffn 1, 3, 31, 33, 127, 129, 1000, 4097, 11008 with tokens 1 ... 64.
std::vector<Case> silu_mul_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden

// ---- Section NPUKIT_GOLDEN_silu_mul: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_silu_mul

#include <cmath>

namespace npukit::golden {

double silu(double g) {
  if (std::isinf(g) && g < 0) return -0.0;
  return g / (1.0 + std::exp(-g));
}

void silu_mul(const double* gate_up, int64_t tokens, int64_t ffn, double* y) {
  for (int64_t t = 0; t < tokens; ++t) {
    const double* gate = gate_up + t * 2 * ffn;
    const double* up = gate + ffn;
    for (int64_t f = 0; f < ffn; ++f) y[t * ffn + f] = silu(gate[f]) * up[f];
  }
}

}  // namespace npukit::golden

#include <utility>

#include "golden/case_builder.h"
#include "golden/half.h"

namespace npukit::golden {
namespace {

enum Half : int64_t { kGate = 0, kUp = 1 };

// gate_up [tokens, 2, ffn] is drawn as its two halves, each from its own streams ("gate",
// "up"; "gate_magnitude", "up_sign", ...).
class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // Appends a case with the default distributions; the helpers below then adjust it.
  void add(int64_t tokens, int64_t ffn, std::string_view note = "") {
    CaseBuilder::add(sizes_text({{"tokens", tokens}, {"ffn", ffn}}), {{"tokens", tokens}, {"halves", 2}, {"ffn", ffn}});
    if (!note.empty()) this->note(note);
    const Array gate = normal("gate", {tokens, ffn}, 0, 3);
    const Array up = normal("up", {tokens, ffn}, 0, 1);
    Array gu{dtype(), {tokens, 2, ffn}, std::vector<double>(static_cast<size_t>(tokens * 2 * ffn))};
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t f = 0; f < ffn; ++f) {
        gu.values[static_cast<size_t>((t * 2 + kGate) * ffn + f)] = gate.values[static_cast<size_t>(t * ffn + f)];
        gu.values[static_cast<size_t>((t * 2 + kUp) * ffn + f)] = up.values[static_cast<size_t>(t * ffn + f)];
      }
    }
    last().inputs["gate_up"] = std::move(gu);
  }

  // Elements f % every == 0 of half `half` of the last case become ±U(lo, hi), each sign a
  // fair coin (`sign` = 0), or of the sign of `sign`.
  void uniform(Half half, double lo, double hi, int64_t every = 1, int sign = 0) {
    const Array& gu = input("gate_up");
    const int64_t tokens = gu.shape[0], ffn = gu.shape[2];
    const std::string s = half == kGate ? "gate" : "up";
    const Array mag = CaseBuilder::uniform(s + "_magnitude", {tokens, ffn}, lo, hi);
    const Array coin = integers(s + "_sign", dtype(), {tokens, ffn}, 0, 1);
    for (int64_t t = 0; t < tokens; ++t) {
      for (int64_t f = 0; f < ffn; f += every) {
        const double m = mag.values[static_cast<size_t>(t * ffn + f)];
        const bool negative = sign == 0 ? coin.values[static_cast<size_t>(t * ffn + f)] != 0 : sign < 0;
        set(t, half, f, negative ? -m : m);
      }
    }
  }

  void set(int64_t t, Half half, int64_t f, double v) { CaseBuilder::set("gate_up", {t, half, f}, v); }
};

void normal_cases(Builder& b) {
  for (auto [tokens, ffn] : {std::pair<int64_t, int64_t>{1, 64}, {1, 11008}, {4, 4096}, {16, 1376}, {32, 2048}}) {
    b.add(tokens, ffn);
  }
}

void boundary_cases(Builder& b) {
  for (auto [tokens, ffn] : {std::pair<int64_t, int64_t>{1, 1}, {64, 1}, {3, 7}, {2, 15}, {17, 16}, {5, 17},
                             {1, 2047}, {3, 2048}, {2, 2049}}) {
    b.add(tokens, ffn);
  }
  b.add(2, 256, "gate=+-0,+-1e-30");
  for (int64_t f = 0; f < 256; f += 4) {
    b.set(0, kGate, f, 0.0);
    b.set(0, kGate, f + 1, -0.0);
    b.set(1, kGate, f, 1e-30);
    b.set(1, kGate, f + 1, -1e-30);
  }
  b.add(2, 512, "gate in [-90,-85]");
  b.uniform(kGate, 85, 90, 2, -1);  // every other gate: the rest stays normal, so not all outputs are ~0
  b.add(2, 512, "gate in [20,100]");
  b.uniform(kGate, 20, 100, 1, +1);
}

void overflow_cases(Builder& b) {
  if (b.dtype() == DType::float16) {
    b.add(2, 1024, "gate,up ~ +-6e4");
    b.uniform(kGate, 30000, 65504);
    b.uniform(kUp, 30000, 65504);
    b.add(2, 1024, "gate in [-20,-10]");
    b.uniform(kGate, 10, 20, 2, -1);
    return;
  }
  b.add(2, 1024, "|gate| in [1e30,3.4e38]");
  b.uniform(kGate, 1e30, 3.4e38);
  b.add(2, 1024, "gate,up ~ +-1e20");
  b.uniform(kGate, 1e19, 1e20);
  b.uniform(kUp, 1e19, 1e20);
  b.add(1, 512, "gate=-100,-1000");
  for (int64_t f = 0; f < 512; f += 4) {
    b.set(0, kGate, f, -100);
    b.set(0, kGate, f + 1, -1000);
  }
}

void nan_inf_cases(Builder& b) {
  b.add(3, 4096, "nan in gate and up");
  b.set(0, kGate, 17, kNaN);
  b.set(1, kUp, 100, kNaN);
  b.set(2, kGate, 4095, kNaN);
  b.set(2, kUp, 4095, kNaN);
  b.add(2, 33, "+-inf gates");
  b.set(0, kGate, 0, kInf);                       // +inf · finite
  b.set(0, kGate, 1, -kInf);                      // -0 · finite
  b.set(0, kGate, 2, kInf), b.set(0, kUp, 2, 0);  // inf · 0 = NaN
  b.set(0, kGate, 3, -kInf), b.set(0, kUp, 3, kInf);   // -0 · inf = NaN
  b.set(0, kGate, 4, kInf), b.set(0, kUp, 4, -kInf);   // -inf
  b.set(1, kGate, 32, -kInf);
  b.add(2, 65, "inf ups");
  b.set(0, kUp, 5, kInf);
  b.set(0, kUp, 6, -kInf);
  b.set(1, kUp, 7, kInf), b.set(1, kGate, 7, 0);  // silu(0) · inf = NaN
}

void shape_cases(Builder& b) {
  for (auto [tokens, ffn] : {std::pair<int64_t, int64_t>{1, 1}, {64, 1}, {3, 3}, {33, 3}, {2, 31}, {5, 33},
                             {7, 127}, {1, 129}, {3, 1000}, {1, 4097}, {9, 4097}, {2, 11008}}) {
    b.add(tokens, ffn);
  }
}

}  // namespace

std::vector<Case> silu_mul_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("silu_mul", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden

#endif  // NPUKIT_GOLDEN_silu_mul


// ---- Section NPUKIT_GATE_HOOKS_silu_mul: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_silu_mul

// The gate's hooks for silu_mul: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/silu_mul.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& gu = c.inputs.at("gate_up");
  const int64_t tokens = c.dims.at("tokens"), ffn = c.dims.at("ffn");
  std::vector<double> y(static_cast<size_t>(tokens * ffn));
  golden::silu_mul(gu.values.data(), tokens, ffn, y.data());
  return {{"y", std::move(y)}};
}

// The largest finite |up| of a case: what a flushed silu is multiplied by.
double max_abs_up(const golden::Case& c) {
  const golden::Array& gu = c.inputs.at("gate_up");
  const int64_t ffn = c.dims.at("ffn");
  double m = 0;
  for (size_t i = 0; i < gu.values.size(); ++i) {
    const double v = std::fabs(gu.values[i]);
    if ((static_cast<int64_t>(i) / ffn) % 2 == 1 && std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

golden::Tolerance tolerance(const golden::Case& c, const std::string&, DType dtype) {
  // Elementwise, no reduction: fast_exp (~2^-18 relative) and three fp32 roundings, so no
  // NMSE escape. Gates below -87.3 make e^gate an fp32 subnormal, which the kernel flushes:
  // silu is then -0 where the true value is at most 87.3·e^-87.3 = 1.03e-36 in magnitude,
  // an absolute error of that times |up|.
  golden::Tolerance t;
  const double flush = 1.1e-36 * max_abs_up(c);
  if (dtype == DType::float16) {
    t.rtol = 1e-3;  // one fp16 ULP is at most 2^-10 = 9.8e-4 relative
    t.atol = std::max(6e-8, flush);  // one ULP of fp16's subnormals, 2^-24
    t.reason = "fp32 arithmetic with fast_exp, then one rounding to fp16: at most 1 fp16 ULP";
  } else {
    t.rtol = 1e-5;
    t.atol = std::max(1e-38, flush);
    t.reason = "fast_exp (2^-18 relative) and three fp32 roundings; gates < -87.3 flush silu to -0 (<= 1.03e-36 |up|)";
  }
  return t;
}

}  // namespace

GateHooks silu_mul_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::silu_mul_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "Elementwise: y = silu(gate) * up with plain IEEE multiplication. silu(NaN) = NaN, silu(+Inf) = +Inf, "
      "silu(-Inf) = -0 (the limit, not -Inf/Inf = NaN), and gates far below zero give -0, never NaN "
      "(silu(-100) = -0: e^-100 is below fp32's normals and is flushed). So NaN in either half, "
      "Inf * 0 and -0 * Inf give NaN; products beyond the output's range give +-Inf.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_silu_mul
