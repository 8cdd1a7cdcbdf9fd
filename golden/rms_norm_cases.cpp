#include "golden/rms_norm_cases.h"

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
  void add(int64_t rows, int64_t hidden, double eps = 1e-5, std::string_view note = "") {
    Case c;
    c.name = "rows=" + std::to_string(rows) + " hidden=" + std::to_string(hidden);
    if (!note.empty()) c.name += " " + std::string(note);
    c.dims = {{"rows", rows}, {"hidden", hidden}};
    c.params = {{"eps", number_text(eps)}};
    c.inputs["x"] = make_normal(stream("x"), index(), dtype_, {rows, hidden}, 0, 1);
    c.inputs["weight"] = make_uniform(stream("weight"), index(), dtype_, {hidden}, 0.5, 1.5);
    cases_.push_back(std::move(c));
  }

  // x of the last case becomes ±U(lo, hi), each sign a fair coin.
  void signed_uniform_x(double lo, double hi) {
    Array& x = cases_.back().inputs["x"];
    const uint64_t i = cases_.size() - 1;
    const Array mag = make_uniform(stream("x_magnitude"), i, dtype_, x.shape, lo, hi);
    const Array sign = make_integers(stream("x_sign"), i, dtype_, x.shape, 0, 1);
    for (size_t k = 0; k < x.values.size(); ++k) {
      x.values[k] = sign.values[k] != 0 ? -mag.values[k] : mag.values[k];
    }
  }

  // x of the last case becomes N(0, stddev²).
  void normal_x(double stddev) {
    Array& x = cases_.back().inputs["x"];
    x = make_normal(stream("x"), cases_.size() - 1, dtype_, x.shape, 0, stddev);
  }

  void set_row(int64_t row, double v) {
    Array& x = cases_.back().inputs["x"];
    const int64_t hidden = x.shape[1];
    for (int64_t i = 0; i < hidden; ++i) set(row, i, v);
  }

  void scale_row(int64_t row, double factor) {
    Array& x = cases_.back().inputs["x"];
    const int64_t hidden = x.shape[1];
    for (int64_t i = 0; i < hidden; ++i) {
      set(row, i, x.values[static_cast<size_t>(row * hidden + i)] * factor);
    }
  }

  void set(int64_t row, int64_t col, double v) {
    Array& x = cases_.back().inputs["x"];
    x.values[static_cast<size_t>(row * x.shape[1] + col)] = round_to_dtype(v, dtype_);
  }

  std::vector<Case> take() { return std::move(cases_); }

 private:
  std::string stream(std::string_view tensor) const {
    return "rms_norm/" + cls_ + "/" + std::string(tensor);
  }
  uint64_t index() const { return cases_.size(); }

  std::string cls_;
  DType dtype_;
  std::vector<Case> cases_;
};

void normal_cases(Builder& b) {
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{1, 64}, {4, 128}, {8, 1000},
                              {16, 4096}, {64, 4096}, {32, 8192}}) {
    b.add(rows, hidden);
  }
}

void boundary_cases(Builder& b) {
  for (auto [rows, hidden] :
       {std::pair<int64_t, int64_t>{1, 1}, {512, 1}, {2, 7}, {3, 63}, {17, 64}, {512, 64},
        {128, 65}, {1, 4095}, {17, 4095}, {2, 4096}, {128, 4096}, {3, 4097}, {512, 4097},
        {1, 8192}, {17, 8192}}) {
    b.add(rows, hidden);
  }
  b.add(3, 4096, 1e-5, "row1=const");
  b.set_row(1, 0.75);
  // mean(x²) ~ 1e-8 << eps: the result is dominated by eps, x/sqrt(eps)*w.
  b.add(2, 4096, 1e-5, "row0=tiny");
  b.scale_row(0, 1e-4);
  b.add(17, 65, 0.0, "eps=0");
  b.add(2, 4096, 0.0, "eps=0");
}

void overflow_cases(Builder& b, DType dtype) {
  if (dtype == DType::float16) {
    b.add(4, 4096, 1e-5, "|x|~6e4");
    b.signed_uniform_x(50000, 65000);
    b.add(3, 64, 1e-5, "|x|=65504");
    b.signed_uniform_x(65504, 65504);
    b.add(2, 4096, 1e-5, "x~N(0,300)");
    b.normal_x(300);
    b.add(2, 4096, 0.0, "|x|~1e-4 eps=0");
    b.signed_uniform_x(0.5e-4, 1.5e-4);
    return;
  }
  b.add(4, 4096, 1e-5, "|x|~1e30");
  b.signed_uniform_x(0.5e30, 1.5e30);
  b.add(2, 64, 1e-5, "|x|~3e38");
  b.signed_uniform_x(2e38, 3.4e38);
  b.add(2, 4096, 1e-5, "x~N(0,1e20)");
  b.normal_x(1e20);
  b.add(4, 4096, 0.0, "|x|~1e-30 eps=0");
  b.signed_uniform_x(0.5e-30, 1.5e-30);
}

void nan_inf_cases(Builder& b) {
  b.add(5, 4096, 1e-5, "nan/+inf/-inf in rows 1/2/3");
  b.set(1, 17, kNaN);
  b.set(2, 100, kInf);
  b.set(3, 4095, -kInf);
  b.add(5, 33, 1e-5, "nan/+inf/-inf in rows 1/2/3");
  b.set(1, 0, kNaN);
  b.set(2, 16, kInf);
  b.set(3, 32, -kInf);
  b.add(2, 4096, 1e-5, "+inf,-inf in row 0");
  b.set(0, 5, kInf);
  b.set(0, 6, -kInf);
  // 0 / sqrt(0 + 0): golden gives NaN for the whole row; the kernel must agree.
  b.add(3, 64, 0.0, "row1=0 eps=0");
  b.set_row(1, 0.0);
}

void shape_cases(Builder& b) {
  for (auto [rows, hidden] :
       {std::pair<int64_t, int64_t>{1, 1}, {512, 1}, {3, 3}, {255, 3}, {2, 31}, {100, 31},
        {5, 33}, {64, 33}, {7, 127}, {31, 127}, {1, 129}, {16, 129}, {3, 1000}, {512, 1000},
        {1, 4097}, {9, 4097}, {2, 8191}, {13, 8191}, {1, 8193}, {33, 8193}}) {
    b.add(rows, hidden);
  }
}

}  // namespace

std::vector<Case> rms_norm_cases(std::string_view input_class, DType dtype) {
  check_input_class("rms_norm", input_class);
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
