#include "golden/silu_mul.h"

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
