// Golden LayerNorm in double:
//   y[r, i] = (x[r, i] - mean_r) / sqrt(var_r + eps) * weight[i] + bias[i],
//   mean_r = Σ_i x[r, i] / hidden,  var_r = Σ_i (x[r, i] - mean_r)² / hidden.
// Then (below) its input classes, the cases the gate runs a kernel on and checks against the
// reference, and the gate's hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x and y of [rows, hidden], weight and bias of [hidden]; y may alias x.
// Evaluated as written, two passes, plain IEEE double: every fp32 or fp16 input (|x| up to
// 3.4e38, hidden up to 2^20) has its sum and squared deviations in range.
//
// NaN/Inf contract, per row (plain IEEE evaluation of the formula):
// - a NaN or an ±Inf anywhere in the row makes the whole row NaN: the mean is NaN or ±Inf,
//   so the deviations hold Inf - Inf = NaN or an Inf, and the variance is NaN or Inf;
// - a constant row with eps = 0 gives 0/0 = NaN; with eps > 0 it gives the bias;
// - NaN/Inf in weight or bias propagate to their column only.
void layer_norm(const double* x, const double* weight, const double* bias, int64_t rows, int64_t hidden, double eps,
                double* y);

// The cases of one input class for x, weight and bias of `dtype` (float16 and float32 get
// their own overflow cases; integer dtypes none).
//
// Dims "rows", "hidden"; inputs "x" [rows, hidden], "weight" and "bias" [hidden]; param "eps".
// Unless a case says otherwise x ~ N(0, 1), weight ~ U(0.5, 1.5), bias ~ U(-0.5, 0.5),
// eps = 1e-5.
//   normal:   GPT-style widths (768, 1024, 1600, 2048, 4096) at decode and prefill rows.
//   boundary: hidden 1, 2, 7, 63, 64, 65, 1599, 1600, 1601, 4096, 8192 against rows 1 ... 512;
//             a constant row (y = bias); a row offset by 1e3 with unit spread (a one-pass
//             variance cancels to nothing); a row of ~1e-4 values whose variance is far
//             below eps; eps = 0; bias = 0.
//   overflow: float16: |x| near 5e4 ... 65000 and 65504 (Σx and Σx² far beyond 65504),
//             weights of ~3e4 that push |y| past 65504 (±Inf). float32: |x| near 1e30 and
//             3e38, N(0, 1e20), 1e-30 with eps = 0, weights of ~2e38 that push |y| past the
//             fp32 range.
//   nan_inf:  NaN, +Inf and -Inf each in its own row; +Inf and -Inf in one row; a constant
//             row with eps = 0; a NaN in weight and an Inf in bias (their columns).
//   shape:    odd hidden 1, 3, 31, 33, 127, 129, 1000, 1601, 4097, 8193 with rows 1 ... 512.
std::vector<Case> layer_norm_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden

// ---- Section NPUKIT_GOLDEN_layer_norm: the reference and the input classes' cases, compiled once, into
// the gate companion (npukit_add_operator writes its unit).
#ifdef NPUKIT_GOLDEN_layer_norm

#include <cmath>

namespace npukit::golden {

void layer_norm(const double* x, const double* weight, const double* bias, int64_t rows, int64_t hidden, double eps,
                double* y) {
  const double n = static_cast<double>(hidden);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * hidden;
    double* yr = y + r * hidden;
    double sum = 0;
    for (int64_t i = 0; i < hidden; ++i) sum += xr[i];
    const double mean = sum / n;
    double sqdev = 0;
    for (int64_t i = 0; i < hidden; ++i) sqdev += (xr[i] - mean) * (xr[i] - mean);
    const double std = std::sqrt(sqdev / n + eps);
    for (int64_t i = 0; i < hidden; ++i) yr[i] = (xr[i] - mean) / std * weight[i] + bias[i];
  }
}

}  // namespace npukit::golden

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

#endif  // NPUKIT_GOLDEN_layer_norm


// ---- Section NPUKIT_GATE_HOOKS_layer_norm: the gate's hooks, compiled once, into the gate companion
// (npukit_add_operator writes its unit).
#ifdef NPUKIT_GATE_HOOKS_layer_norm

// The gate's hooks for layer_norm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/layer_norm.cpp is the rest of the op; the op's own library links
// none of this: it is the plug-in's gate companion).
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
  // eps is an fp32 number of the op (its kernels take it as one, as PyTorch's fp32 LayerNorm
  // does): where var << eps, 1e-5 and its fp32 neighbour differ in y by far more than an ULP.
  const double eps = static_cast<float>(std::stod(c.params.at("eps")));
  std::vector<double> y(x.values.size());
  golden::layer_norm(x.values.data(), c.inputs.at("weight").values.data(), c.inputs.at("bias").values.data(), rows,
                     hidden, eps, y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string&, DType dtype) {
  // The kernel computes in fp64 as the golden does (only the order of the sums differs, by a
  // few fp64 ULPs) and rounds once: its result is the golden's rounded value, or one ULP off
  // where the two straddle a rounding boundary. No NMSE escape: one wrong element fails.
  golden::Tolerance t;
  if (dtype == DType::float16) {
    t.rtol = 1e-3;  // one fp16 ULP is at most 2^-10 = 9.8e-4 relative
    t.atol = 1e-5;  // fp16's subnormals
    t.reason = "fp64 arithmetic, then one rounding to fp16 (through fp32): at most 1 fp16 ULP";
  } else {
    t.rtol = 2.4e-7;  // two fp32 ULPs
    t.atol = 1e-12;   // where x̂·w cancels the bias, the fp64 error of the terms
    t.reason = "fp64 arithmetic, then one rounding to fp32: at most 1 fp32 ULP (2 allowed)";
  }
  return t;
}

}  // namespace

GateHooks layer_norm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::layer_norm_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or an Inf anywhere in a row makes the whole row NaN (the mean or the variance is NaN or Inf). A "
      "constant row with eps = 0 is NaN (0/0); with eps > 0 it is the bias. NaN/Inf in weight or bias reach "
      "their column only; results beyond the dtype's range are +-Inf. Rows with |x| up to 3.4e38, or a large "
      "mean and a small spread, are still correct: the statistics are fp64, in two passes.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_layer_norm
