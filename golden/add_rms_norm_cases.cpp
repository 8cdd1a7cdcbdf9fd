#include "golden/add_rms_norm.h"

#include <utility>

#include "golden/case_builder.h"

namespace npukit::golden {
namespace {

class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // Appends a case with the default distributions; the helpers below then adjust it.
  void add(int64_t rows, int64_t hidden, double eps = 1e-6, std::string_view note = "") {
    CaseBuilder::add(sizes_text({{"rows", rows}, {"hidden", hidden}}), {{"rows", rows}, {"hidden", hidden}},
                     {{"eps", number_text(eps)}});
    if (!note.empty()) this->note(note);
    last().inputs["x"] = normal("x", {rows, hidden}, 0, 0.5);
    last().inputs["residual"] = normal("residual", {rows, hidden}, 0, 1);
    last().inputs["weight"] = uniform("weight", {hidden}, 0.5, 1.5);
  }

  // x of row `row` becomes -residual: their sum is exactly 0.
  void cancel_row(int64_t r) {
    const Array& residual = input("residual");
    Array& x = input("x");
    for_slice(x, row(r), [&](size_t k) { x.values[k] = -residual.values[k]; });
  }
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
  b.scale("x", 1e-9, row(0));
}

void overflow_cases(Builder& b) {
  const bool f16 = b.dtype() == DType::float16;
  const double near_max = f16 ? 4e4 : 2e38, top = f16 ? 65504 : 3.4e38;
  b.add(4, 1024, 1e-6, f16 ? "rows 0-1: x,residual ~ 4e4 (sum > 65504)" : "rows 0-1: x,residual ~ 2e38 (sum > 3.4e38)");
  for (const char* t : {"x", "residual"}) b.signed_uniform(t, near_max, top, row(0), Sign::positive);
  for (const char* t : {"x", "residual"}) b.signed_uniform(t, near_max, top, row(1), Sign::negative);
  if (f16) {
    b.add(2, 4096, 1e-6, "x,residual ~ +-[100,300]");
    for (const char* t : {"x", "residual"}) b.signed_uniform(t, 100, 300, rows(0, 2));
    return;
  }
  b.add(2, 4096, 1e-6, "x,residual ~ +-[1e29,1e30]");
  for (const char* t : {"x", "residual"}) b.signed_uniform(t, 1e29, 1e30, rows(0, 2));
}

void nan_inf_cases(Builder& b) {
  b.add(6, 4096, 1e-6, "nan x / +inf residual / -inf x / +inf + -inf in rows 1-4");
  b.set("x", {1, 17}, kNaN);
  b.set("residual", {2, 100}, kInf);
  b.set("x", {3, 4095}, -kInf);
  b.set("x", {4, 0}, kInf);
  b.set("residual", {4, 0}, -kInf);
  b.add(5, 33, 1e-6, "nan/+inf/-inf in rows 1/2/3");
  b.set("residual", {1, 0}, kNaN);
  b.set("x", {2, 16}, kInf);
  b.set("residual", {3, 32}, -kInf);
}

void shape_cases(Builder& b) {
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{1, 1}, {256, 1}, {3, 3}, {2, 31}, {64, 33}, {7, 127},
                              {1, 129}, {3, 1000}, {1, 4097}, {9, 4097}, {2, 8191}}) {
    b.add(rows, hidden);
  }
}

}  // namespace

std::vector<Case> add_rms_norm_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("add_rms_norm", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden
