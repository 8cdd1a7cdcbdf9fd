#include "golden/per_token_quant_cases.h"

#include <cmath>
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

  // Appends a case with a ~ N(0, 1); the helpers below then adjust it.
  void add(int64_t T, int64_t K, std::string_view note = "") {
    Case c;
    c.name = "T=" + std::to_string(T) + " K=" + std::to_string(K);
    if (!note.empty()) c.name += " " + std::string(note);
    c.dims = {{"T", T}, {"K", K}};
    c.inputs["a"] = make_normal(stream("a"), index(), dtype_, {T, K}, 0, 1);
    cases_.push_back(std::move(c));
  }

  // a of the last case becomes ±U(lo, hi), each sign a fair coin.
  void signed_uniform(double lo, double hi) {
    Array& a = cases_.back().inputs["a"];
    const uint64_t i = cases_.size() - 1;
    const Array mag = make_uniform(stream("a_magnitude"), i, dtype_, a.shape, lo, hi);
    const Array sign = make_integers(stream("a_sign"), i, dtype_, a.shape, 0, 1);
    for (size_t k = 0; k < a.values.size(); ++k) a.values[k] = sign.values[k] != 0 ? -mag.values[k] : mag.values[k];
  }

  void scale_row(int64_t row, double factor) {
    for (int64_t c = 0; c < K(); ++c) set(row, c, at(row, c) * factor);
  }
  void set_row(int64_t row, double v) {
    for (int64_t c = 0; c < K(); ++c) set(row, c, v);
  }
  void set(int64_t row, int64_t col, double v) {
    Array& a = cases_.back().inputs["a"];
    a.values[static_cast<size_t>(row * K() + col)] = round_to_dtype(v, dtype_);
  }

  std::vector<Case> take() { return std::move(cases_); }

 private:
  int64_t K() const { return cases_.back().inputs.at("a").shape[1]; }
  double at(int64_t row, int64_t col) const {
    return cases_.back().inputs.at("a").values[static_cast<size_t>(row * K() + col)];
  }
  std::string stream(std::string_view tensor) const { return "per_token_quant/" + cls_ + "/" + std::string(tensor); }
  uint64_t index() const { return cases_.size(); }

  std::string cls_;
  DType dtype_;
  std::vector<Case> cases_;
};

void normal_cases(Builder& b) {
  for (auto [T, K] : {std::pair<int64_t, int64_t>{1, 64}, {1, 4096}, {4, 1000}, {16, 4096}, {64, 4096}, {32, 2048}}) {
    b.add(T, K);
  }
}

void boundary_cases(Builder& b) {
  for (auto [T, K] : {std::pair<int64_t, int64_t>{1, 1}, {33, 1}, {2, 7}, {3, 15}, {3, 16}, {5, 17}, {2, 63},
                      {9, 64}, {4, 65}, {1, 4095}, {3, 4096}, {2, 4097}}) {
    b.add(T, K);
  }
  b.add(4, 256, "row1=0");
  b.set_row(1, 0.0);  // s = 0: q = 0, scale 0
  b.add(3, 100, "row2=const");
  b.set_row(2, -0.75);  // every q = -127
  // max |a| = 127 makes s = 1 exactly, so a = n + 0.5 are exact ties: nearbyint rounds
  // them to even, round-half-away would not.
  b.add(2, 64, "row0=ties");
  for (int64_t c = 0; c < 64; ++c) b.set(0, c, c == 0 ? 127.0 : double(c % 9) - 4.0 + 0.5);
  b.add(3, 64, "row1=negative max");
  b.set(1, 5, -50.0);
  // One outlier: its q is ±127, the row's others fall to |q| ≤ 1.
  b.add(4, 512, "row3=outlier");
  b.set(3, 200, 1000.0);
}

void overflow_cases(Builder& b, DType dtype) {
  if (dtype == DType::float16) {
    b.add(4, 4096, "|a|~6e4");
    b.signed_uniform(50000, 65504);
    b.add(3, 64, "|a|=65504");
    b.signed_uniform(65504, 65504);
    b.add(3, 1000, "fp16 subnormal");
    b.signed_uniform(6e-8, 6e-5);
    return;
  }
  b.add(4, 4096, "|a|~3e38");
  b.signed_uniform(1e38, 3.4e38);
  b.add(3, 1000, "|a|~1e-38");
  b.signed_uniform(0.5e-38, 1.5e-38);
  // s = max / 127 of a subnormal row is a smaller subnormal; of the smallest ones, 0.
  b.add(3, 64, "subnormal rows");
  b.signed_uniform(1e-42, 1e-40);
  b.scale_row(2, 1e-4);
}

void nan_inf_cases(Builder& b) {
  b.add(6, 4096, "nan/+inf/-inf in rows 1/3/4");
  b.set(1, 17, kNaN);
  b.set(3, 100, kInf);
  b.set(4, 4095, -kInf);
  b.add(7, 33, "nan/+inf/-inf in rows 1/3/5");
  b.set(1, 0, kNaN);
  b.set(3, 16, kInf);
  b.set(5, 32, -kInf);
  b.add(4, 4096, "+inf,-inf in row 0");
  b.set(0, 5, kInf);
  b.set(0, 6, -kInf);
  b.add(5, 129, "nan last in row 2");
  b.set(2, 128, kNaN);
}

void shape_cases(Builder& b) {
  for (auto [T, K] : {std::pair<int64_t, int64_t>{1, 1}, {129, 1}, {3, 3}, {65, 3}, {2, 31}, {100, 31}, {5, 33},
                      {7, 127}, {1, 129}, {16, 129}, {3, 1000}, {1, 4097}, {9, 4097}, {2, 8191}, {1, 8191}}) {
    b.add(T, K);
  }
}

}  // namespace

std::vector<Case> per_token_quant_cases(std::string_view input_class, DType dtype) {
  check_input_class("per_token_quant", input_class);
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
