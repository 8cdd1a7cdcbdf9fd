// Golden RMSNorm in double: y[r, i] = x[r, i] / sqrt(mean_i(x[r, i]²) + eps) * weight[i].
// Then (below) its input classes, the cases the gate runs a kernel
// on and checks against the reference, and the gate's hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x and y of [rows, hidden], weight of [hidden]; y may alias x.
// Evaluated as written: a division by the rms, then a multiplication by the weight (not a
// multiplication by a reciprocal), so it rounds like a straightforward double kernel.
//
// Range: the sum of squares is taken on the row scaled by a power of two near its max |x|
// (as BLAS nrm2 does), so |x| up to 1e300 or down to 1e-300 neither overflows nor
// underflows; for data on which the plain double formula neither overflows nor underflows,
// the result is bit-identical to it.
//
// NaN/Inf contract, per row (the same as plain IEEE evaluation of the formula):
// - a NaN anywhere in the row makes the whole row NaN;
// - otherwise an ±Inf in the row makes the mean Inf, so finite x give x/Inf*w = ±0*w and
//   the ±Inf elements give Inf/Inf = NaN;
// - an all-zero row with eps = 0 gives 0/0 = NaN; with eps > 0 it gives ±0*w;
// - NaN/Inf in weight propagate through the final multiplication only.
void rms_norm(const double* x, const double* weight, int64_t rows, int64_t hidden, double eps,
              double* y);


// The cases of one input class for x and weight of `dtype` (float16 and float32
// get their own overflow cases; float64 uses float32's). Integer dtypes have no RMSNorm
// cases: empty.
//
// Tensor t of case i (its position in the returned vector) is drawn from
// case_seed("rms_norm/<class>/<t>", i, chunk): naming the class and tensor in the seed
// keeps x and weight, and same-index cases of different classes, uncorrelated. The same
// (class, dtype) always gives the same bits.
//
// Dims "rows", "hidden"; inputs "x" [rows, hidden] and "weight" [hidden]; param "eps".
// Unless a case says otherwise x ~ N(0, 1), weight ~ U(0.5, 1.5), eps = 1e-5.
//   normal:   a few decode-like shapes.
//   boundary: hidden 1, 7, 63, 64, 65, 4095, 4096, 4097, 8192 against rows 1, 2, 3, 17,
//             128, 512 (not the full product); a constant row; a row of ~1e-4 values whose
//             mean square is far below eps; eps = 0 on normal data.
//   overflow: float16: |x| near 6e4 or 65504, and N(0, 300), so Σx² far exceeds 65504;
//             |x| ~ 1e-4 with eps = 0, whose squares underflow float16.
//             float32: |x| near 1e30 or 3e38, and N(0, 1e20), so Σx² overflows a float
//             accumulator; |x| ~ 1e-30 with eps = 0, whose squares underflow float.
//   nan_inf:  NaN, +Inf and -Inf each in its own row among normal rows; +Inf and -Inf in
//             one row; an all-zero row with eps = 0, for which golden gives NaN (0/0).
//   shape:    odd hidden 1, 3, 31, 33, 127, 129, 1000, 4097, 8191, 8193 with rows 1...512.
// Each class stays under ~8M elements so that it runs in about a second.
std::vector<Case> rms_norm_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden

// ---- Section NPUKIT_GOLDEN_rms_norm: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_rms_norm

#include <cmath>
#include <limits>

namespace npukit::golden {

void rms_norm(const double* x, const double* weight, int64_t rows, int64_t hidden, double eps,
              double* y) {
  const double n = static_cast<double>(hidden);
  for (int64_t r = 0; r < rows; ++r) {
    const double* xr = x + r * hidden;
    double* yr = y + r * hidden;

    bool has_nan = false, has_inf = false;
    double max_abs = 0;
    for (int64_t i = 0; i < hidden; ++i) {
      const double a = std::fabs(xr[i]);
      if (std::isnan(a)) has_nan = true;
      else if (std::isinf(a)) has_inf = true;
      else if (a > max_abs) max_abs = a;
    }

    // rms_s = rms / s with s a power of two near max|x|: scaling by s is exact, so ssq is
    // the plain sum of squares moved into a range where it cannot overflow or underflow.
    double s = 1, rms_s;
    if (has_nan) {
      rms_s = std::numeric_limits<double>::quiet_NaN();
    } else if (has_inf) {
      rms_s = std::numeric_limits<double>::infinity();
    } else {
      int e = 0;
      if (max_abs > 0) {
        std::frexp(max_abs, &e);
        s = std::ldexp(1.0, e);
      }
      double ssq = 0;
      for (int64_t i = 0; i < hidden; ++i) {
        const double v = xr[i] / s;
        ssq += v * v;
      }
      const double eps_s = eps / s / s;
      if (std::isfinite(eps_s)) {
        rms_s = std::sqrt(ssq / n + eps_s);
      } else {
        // Tiny row, eps not: mean(x²) <= s² < eps * 2^-1024, so dropping it is exact.
        s = 1;
        rms_s = std::sqrt(eps);
      }
    }
    // rms itself is in range (max|x|/sqrt(hidden) <= rms <= max|x| for small eps); use it
    // as the plain formula would, unless it is subnormal and would lose bits.
    const double rms = s * rms_s;
    if (std::isnan(rms) || rms >= std::numeric_limits<double>::min()) {
      for (int64_t i = 0; i < hidden; ++i) yr[i] = xr[i] / rms * weight[i];
    } else {
      for (int64_t i = 0; i < hidden; ++i) yr[i] = xr[i] / s / rms_s * weight[i];
    }
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

#endif  // NPUKIT_GOLDEN_rms_norm


// ---- Section NPUKIT_GATE_HOOKS_rms_norm: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_rms_norm

// The gate's hooks for rms_norm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/rms_norm.cpp is the rest of the op; libnpukit.so links none of this).
#include <algorithm>
#include <cmath>

#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  const golden::Array& w = c.inputs.at("weight");
  const int64_t rows = c.dims.at("rows"), hidden = c.dims.at("hidden");
  std::vector<double> y(x.values.size());
  golden::rms_norm(x.values.data(), w.values.data(), rows, hidden, std::stod(c.params.at("eps")), y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string&, DType dtype) {
  // Every element is x · (1/rms) · w: the sum of squares is accumulated in fp64 (on the CPU
  // fp32 squares in fp32 blocks of 512, ~1e-6 relative; ops::SquareSum), so each output carries a few fp32
  // roundings and nothing that grows with hidden. That is far tighter than the
  // default for reductions, and no NMSE escape: one wrong element among millions fails.
  golden::Tolerance t;
  if (dtype == DType::float16) {
    t.rtol = 1e-3;  // one fp16 ULP is at most 2^-10 = 9.8e-4 relative
    t.atol = 1e-5;
    t.reason = "fp32 arithmetic, then one rounding to fp16: at most 1 fp16 ULP";
  } else {
    t.rtol = 1e-5;
    t.atol = 1e-6;
    t.reason = "sum of squares accumulated in fp64, then three fp32 roundings: a few fp32 ULPs";
  }
  return t;
}

}  // namespace

GateHooks rms_norm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::rms_norm_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "A NaN or Inf in a row affects only that row: a NaN makes the whole row NaN; an Inf "
      "makes its own element NaN and the rest of the row 0. An all-zero row with eps = 0 is "
      "NaN (0/0). Sums of squares beyond the fp32 range (|x| up to 3.4e38) and fp16 rows "
      "whose sum of squares exceeds 65504 are still correct: the sum of squares is accumulated in fp64 "
      "(fp32 blocks of squares, added in fp64; an fp32 row beyond the blocks' range summed again in fp64).";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_rms_norm
