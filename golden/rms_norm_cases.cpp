#include "golden/rms_norm.h"

#include <utility>

#include "golden/case_builder.h"

namespace npukit::golden {
namespace {

class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // Appends a case with the default distributions; the helpers below then adjust it.
  void add(int64_t rows, int64_t hidden, double eps = 1e-5, std::string_view note = "") {
    CaseBuilder::add(sizes_text({{"rows", rows}, {"hidden", hidden}}), {{"rows", rows}, {"hidden", hidden}},
                     {{"eps", number_text(eps)}});
    if (!note.empty()) this->note(note);
    last().inputs["x"] = normal("x", {rows, hidden}, 0, 1);
    last().inputs["weight"] = uniform("weight", {hidden}, 0.5, 1.5);
  }

  // x of the last case becomes N(0, stddev²).
  void normal_x(double stddev) { input("x") = normal("x", input("x").shape, 0, stddev); }
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
  b.fill("x", 0.75, row(1));
  // mean(x²) ~ 1e-8 << eps: the result is dominated by eps, x/sqrt(eps)*w.
  b.add(2, 4096, 1e-5, "row0=tiny");
  b.scale("x", 1e-4, row(0));
  b.add(17, 65, 0.0, "eps=0");
  b.add(2, 4096, 0.0, "eps=0");
}

void overflow_cases(Builder& b) {
  if (b.dtype() == DType::float16) {
    b.add(4, 4096, 1e-5, "|x|~6e4");
    b.signed_uniform("x", 50000, 65000);
    b.add(3, 64, 1e-5, "|x|=65504");
    b.signed_uniform("x", 65504, 65504);
    b.add(2, 4096, 1e-5, "x~N(0,300)");
    b.normal_x(300);
    b.add(2, 4096, 0.0, "|x|~1e-4 eps=0");
    b.signed_uniform("x", 0.5e-4, 1.5e-4);
    return;
  }
  b.add(4, 4096, 1e-5, "|x|~1e30");
  b.signed_uniform("x", 0.5e30, 1.5e30);
  b.add(2, 64, 1e-5, "|x|~3e38");
  b.signed_uniform("x", 2e38, 3.4e38);
  b.add(2, 4096, 1e-5, "x~N(0,1e20)");
  b.normal_x(1e20);
  b.add(4, 4096, 0.0, "|x|~1e-30 eps=0");
  b.signed_uniform("x", 0.5e-30, 1.5e-30);
}

void nan_inf_cases(Builder& b) {
  b.add(5, 4096, 1e-5, "nan/+inf/-inf in rows 1/2/3");
  b.set("x", {1, 17}, kNaN);
  b.set("x", {2, 100}, kInf);
  b.set("x", {3, 4095}, -kInf);
  b.add(5, 33, 1e-5, "nan/+inf/-inf in rows 1/2/3");
  b.set("x", {1, 0}, kNaN);
  b.set("x", {2, 16}, kInf);
  b.set("x", {3, 32}, -kInf);
  b.add(2, 4096, 1e-5, "+inf,-inf in row 0");
  b.set("x", {0, 5}, kInf);
  b.set("x", {0, 6}, -kInf);
  // 0 / sqrt(0 + 0): golden gives NaN for the whole row; the kernel must agree.
  b.add(3, 64, 0.0, "row1=0 eps=0");
  b.fill("x", 0.0, row(1));
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

std::vector<Case> rms_norm_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("rms_norm", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden
