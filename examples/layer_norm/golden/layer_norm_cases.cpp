#include <utility>

#include "golden/case_builder.h"
#include "golden/layer_norm.h"

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
    last().inputs["bias"] = uniform("bias", {hidden}, -0.5, 0.5);
  }

  // x of the last case becomes N(mean, stddev²).
  void normal_x(double mean, double stddev) { input("x") = normal("x", input("x").shape, mean, stddev); }
};

void normal_cases(Builder& b) {
  for (auto [rows, hidden] : {std::pair<int64_t, int64_t>{1, 768}, {4, 1024}, {8, 1600}, {16, 2048}, {32, 4096},
                              {64, 768}}) {
    b.add(rows, hidden);
  }
}

void boundary_cases(Builder& b) {
  for (auto [rows, hidden] :
       {std::pair<int64_t, int64_t>{1, 1}, {512, 1}, {3, 2}, {2, 7}, {3, 63}, {17, 64}, {512, 64}, {128, 65},
        {1, 1599}, {17, 1600}, {128, 1600}, {3, 1601}, {2, 4096}, {1, 8192}, {17, 8192}}) {
    b.add(rows, hidden);
  }
  b.add(3, 1600, 1e-5, "row1=const");
  b.fill("x", 0.75, row(1));
  // A one-pass variance, E[x²] - E[x]², would be 1e6 - 1e6 here: nothing left of the unit
  // spread in fp32.
  b.add(4, 1600, 1e-5, "x~N(1e3,1)");
  b.normal_x(1000, 1);
  // var ~ 1e-8 << eps: the result is dominated by eps, (x - mean)/sqrt(eps)*w + b.
  b.add(2, 4096, 1e-5, "row0=tiny");
  b.scale("x", 1e-4, row(0));
  b.add(17, 65, 0.0, "eps=0");
  b.add(2, 1600, 0.0, "eps=0");
  b.add(8, 1600, 1e-5, "bias=0");
  b.fill("bias", 0.0);
}

void overflow_cases(Builder& b) {
  if (b.dtype() == DType::float16) {
    b.add(4, 4096, 1e-5, "|x|~6e4");
    b.signed_uniform("x", 50000, 65000);
    b.add(3, 64, 1e-5, "|x|=65504");
    b.signed_uniform("x", 65504, 65504);
    b.add(2, 4096, 1e-5, "x~N(3e4,300)");
    b.normal_x(30000, 300);
    // |y| = |x̂|·|w| passes 65504 wherever |x̂| > ~2: those elements are ±Inf.
    b.add(4, 1600, 1e-5, "|w|~3e4");
    b.signed_uniform("weight", 25000, 35000);
    return;
  }
  b.add(4, 4096, 1e-5, "|x|~1e30");
  b.signed_uniform("x", 0.5e30, 1.5e30);
  b.add(2, 64, 1e-5, "|x|~3e38");
  b.signed_uniform("x", 2e38, 3.4e38);
  b.add(2, 4096, 1e-5, "x~N(0,1e20)");
  b.normal_x(0, 1e20);
  b.add(4, 4096, 0.0, "|x|~1e-30 eps=0");
  b.signed_uniform("x", 0.5e-30, 1.5e-30);
  b.add(4, 1600, 1e-5, "|w|~2e38");
  b.signed_uniform("weight", 1e38, 3e38);
}

void nan_inf_cases(Builder& b) {
  b.add(5, 1600, 1e-5, "nan/+inf/-inf in rows 1/2/3");
  b.set("x", {1, 17}, kNaN);
  b.set("x", {2, 100}, kInf);
  b.set("x", {3, 1599}, -kInf);
  b.add(5, 33, 1e-5, "nan/+inf/-inf in rows 1/2/3");
  b.set("x", {1, 0}, kNaN);
  b.set("x", {2, 16}, kInf);
  b.set("x", {3, 32}, -kInf);
  b.add(2, 4096, 1e-5, "+inf,-inf in row 0");
  b.set("x", {0, 5}, kInf);
  b.set("x", {0, 6}, -kInf);
  // (x - mean) / sqrt(0 + 0) = 0/0: golden gives NaN for the whole row; the kernel must agree.
  b.add(3, 64, 0.0, "row1=const eps=0");
  b.fill("x", 0.25, row(1));
  b.add(4, 1600, 1e-5, "weight[7]=nan bias[9]=inf");
  b.set("weight", {7}, kNaN);
  b.set("bias", {9}, kInf);
}

void shape_cases(Builder& b) {
  for (auto [rows, hidden] :
       {std::pair<int64_t, int64_t>{1, 1}, {255, 3}, {2, 31}, {100, 31}, {5, 33}, {64, 33}, {7, 127}, {31, 127},
        {1, 129}, {16, 129}, {3, 1000}, {512, 1000}, {1, 1601}, {9, 1601}, {1, 4097}, {9, 4097}, {1, 8193},
        {33, 8193}}) {
    b.add(rows, hidden);
  }
}

}  // namespace

std::vector<Case> layer_norm_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("layer_norm", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden
