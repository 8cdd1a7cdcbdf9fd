#include "golden/add_rms_norm_cases.h"

#include <limits>
#include <stdexcept>
#include <utility>

#include "golden/half.h"

namespace npukit::golden {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

class Builder {
 public:
  Builder(std::string_view cls, DType dtype) : cls_(cls), dtype_(dtype) {}

  // Appends a case with the default distributions; the helpers below then adjust it.
  void add(int64_t rows, int64_t hidden, double eps = 1e-6, std::string_view note = "") {
    Case c;
    c.name = "rows=" + std::to_string(rows) + " hidden=" + std::to_string(hidden);
    if (!note.empty()) c.name += " " + std::string(note);
    c.dims = {{"rows", rows}, {"hidden", hidden}};
    c.params = {{"eps", number_text(eps)}};
    c.inputs["x"] = make_normal(stream("x"), index(), dtype_, {rows, hidden}, 0, 0.5);
    c.inputs["residual"] = make_normal(stream("residual"), index(), dtype_, {rows, hidden}, 0, 1);
    c.inputs["weight"] = make_uniform(stream("weight"), index(), dtype_, {hidden}, 0.5, 1.5);
    cases_.push_back(std::move(c));
  }

  // Tensor `name` ("x" or "residual") of the last case becomes U(lo, hi) times `sign`
  // (±1), or a fair coin's sign when `sign` is 0, in rows [first, last).
  void uniform(const std::string& name, double lo, double hi, int sign, int64_t first, int64_t last) {
    Array& a = cases_.back().inputs[name];
    const uint64_t i = cases_.size() - 1;
    const Array mag = make_uniform(stream(name + "_magnitude"), i, dtype_, a.shape, lo, hi);
    const Array coin = make_integers(stream(name + "_sign"), i, dtype_, a.shape, 0, 1);
    const int64_t hidden = a.shape[1];
    for (int64_t k = first * hidden; k < last * hidden; ++k) {
      const bool negative = sign == 0 ? coin.values[static_cast<size_t>(k)] != 0 : sign < 0;
      const double m = mag.values[static_cast<size_t>(k)];
      a.values[static_cast<size_t>(k)] = negative ? -m : m;
    }
  }

  // x of row `row` becomes -residual: their sum is exactly 0.
  void cancel_row(int64_t row) {
    Case& c = cases_.back();
    const int64_t hidden = c.dims.at("hidden");
    for (int64_t i = row * hidden; i < (row + 1) * hidden; ++i) {
      c.inputs["x"].values[static_cast<size_t>(i)] = -c.inputs["residual"].values[static_cast<size_t>(i)];
    }
  }

  // x of row `row` scaled by `factor`.
  void scale_x_row(int64_t row, double factor) {
    Case& c = cases_.back();
    const int64_t hidden = c.dims.at("hidden");
    for (int64_t i = 0; i < hidden; ++i) set("x", row, i, c.inputs["x"].values[static_cast<size_t>(row * hidden + i)] * factor);
  }

  void set(const std::string& name, int64_t row, int64_t col, double v) {
    Array& a = cases_.back().inputs[name];
    a.values[static_cast<size_t>(row * a.shape[1] + col)] = round_to_dtype(v, dtype_);
  }

  std::vector<Case> take() { return std::move(cases_); }

 private:
  std::string stream(std::string_view tensor) const { return "add_rms_norm/" + cls_ + "/" + std::string(tensor); }
  uint64_t index() const { return cases_.size(); }

  std::string cls_;
  DType dtype_;
  std::vector<Case> cases_;
};

void normal_cases(Builder& b) {
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{1, 64}, {1, 4096}, {4, 1000}, {16, 4096}, {64, 5120}}) {
    b.add(rows, hidden);
  }
}

void boundary_cases(Builder& b) {
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{1, 1}, {128, 1}, {2, 7}, {3, 63}, {17, 64}, {5, 65},
                              {1, 4095}, {2, 4096}, {3, 4097}}) {
    b.add(rows, hidden);
  }
  b.add(3, 256, 1e-6, "row1: x=-residual");
  b.cancel_row(1);
  b.add(3, 256, 0.0, "row1: x=-residual eps=0");
  b.cancel_row(1);
  b.add(2, 4096, 1e-6, "row0: |x|<<|residual|");
  b.scale_x_row(0, 1e-9);
}

void overflow_cases(Builder& b, DType dtype) {
  const bool f16 = dtype == DType::float16;
  const double near_max = f16 ? 4e4 : 2e38, top = f16 ? 65504 : 3.4e38;
  b.add(4, 1024, 1e-6, f16 ? "rows 0-1: x,residual ~ 4e4 (sum > 65504)" : "rows 0-1: x,residual ~ 2e38 (sum > 3.4e38)");
  for (const char* t : {"x", "residual"}) b.uniform(t, near_max, top, +1, 0, 1);
  for (const char* t : {"x", "residual"}) b.uniform(t, near_max, top, -1, 1, 2);
  if (f16) {
    b.add(2, 4096, 1e-6, "x,residual ~ +-[100,300]");
    for (const char* t : {"x", "residual"}) b.uniform(t, 100, 300, 0, 0, 2);
    return;
  }
  b.add(2, 4096, 1e-6, "x,residual ~ +-[1e29,1e30]");
  for (const char* t : {"x", "residual"}) b.uniform(t, 1e29, 1e30, 0, 0, 2);
}

void nan_inf_cases(Builder& b) {
  b.add(6, 4096, 1e-6, "nan x / +inf residual / -inf x / +inf + -inf in rows 1-4");
  b.set("x", 1, 17, kNaN);
  b.set("residual", 2, 100, kInf);
  b.set("x", 3, 4095, -kInf);
  b.set("x", 4, 0, kInf);
  b.set("residual", 4, 0, -kInf);
  b.add(5, 33, 1e-6, "nan/+inf/-inf in rows 1/2/3");
  b.set("residual", 1, 0, kNaN);
  b.set("x", 2, 16, kInf);
  b.set("residual", 3, 32, -kInf);
}

void shape_cases(Builder& b) {
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{1, 1}, {256, 1}, {3, 3}, {2, 31}, {64, 33}, {7, 127},
                              {1, 129}, {3, 1000}, {1, 4097}, {9, 4097}, {2, 8191}}) {
    b.add(rows, hidden);
  }
}

}  // namespace

std::vector<Case> add_rms_norm_cases(std::string_view input_class, DType dtype) {
  check_input_class("add_rms_norm", input_class);
  if (!dtype_is_float(dtype)) return {};
  Builder b(input_class, dtype);
  if (input_class == "normal") normal_cases(b);
  if (input_class == "boundary") boundary_cases(b);
  if (input_class == "overflow") overflow_cases(b, dtype);
  if (input_class == "nan_inf") nan_inf_cases(b);
  if (input_class == "shape") shape_cases(b);
  return b.take();
}

}  // namespace npukit::golden
