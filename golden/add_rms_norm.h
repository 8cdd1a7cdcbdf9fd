// Golden residual-add + RMSNorm (vLLM's fused_add_rms_norm) in double:
// residual ← round(x + residual); y = rms_norm(residual) · weight.
// Then (below) its input classes, the cases the gate runs a kernel
// on and checks against the reference, and the gate's hooks.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x, residual and y of [rows, hidden], weight of [hidden]. The sum x + residual
// is rounded to `dtype` (the residual's storage type: the stream stays in it) and written
// back into `residual`; y is golden::rms_norm of that rounded residual, in double (its
// NaN/Inf contract is rms_norm's, applied to the sum: +Inf + -Inf is NaN, a sum beyond
// the dtype's range is ±Inf).
void add_rms_norm(const double* x, double* residual, const double* weight, int64_t rows, int64_t hidden, double eps,
                  DType dtype, double* y);


// The cases of one input class for tensors of `dtype` (float16 and float32 get their own
// overflow cases; float64 uses float32's). Integer dtypes: empty. Drawn from case_seed("add_rms_norm/<class>/<tensor>", i, chunk).
//
// Dims "rows", "hidden"; inputs "x" and "residual" [rows, hidden] (residual is updated in
// place) and "weight" [hidden]; param "eps". Unless a case says otherwise x ~ N(0, 0.5²),
// residual ~ N(0, 1), weight ~ U(0.5, 1.5), eps = 1e-6 (Llama's).
//   normal:   decode and prefill-like shapes.
//   boundary: hidden 1, 7, 63, 64, 65, 4095, 4096, 4097 against a few row counts; a row
//             with x = -residual (the sum is exactly 0: y = 0 with eps > 0), the same with
//             eps = 0 (NaN: 0/0); x far smaller than residual (the sum rounds to residual).
//   overflow: float16: x and residual of one sign near 4e4, whose sum overflows fp16 (±Inf
//             in the residual, so y is NaN there and 0 elsewhere in the row); |x| ~ 300
//             rows whose Σ exceeds 65504. float32: the same near 2e38, and |x| ~ 1e30 rows
//             whose Σx² overflows an fp32 accumulator.
//   nan_inf:  NaN in x, +Inf in residual, -Inf in x, +Inf + -Inf (NaN in the residual),
//             each in its own row among normal rows.
//   shape:    odd hidden 1, 3, 31, 33, 127, 129, 1000, 4097, 8191 with rows 1 ... 256.
std::vector<Case> add_rms_norm_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden

// ---- Section NPUKIT_GOLDEN_add_rms_norm: the reference and the input classes' cases, compiled once, into
// npukit_golden (cmake/NpukitOperators.cmake).
#ifdef NPUKIT_GOLDEN_add_rms_norm

#include "golden/half.h"
#include "golden/rms_norm.h"

namespace npukit::golden {

void add_rms_norm(const double* x, double* residual, const double* weight, int64_t rows, int64_t hidden, double eps,
                  DType dtype, double* y) {
  // x + residual of two values of `dtype` is exact in double for fp16 and fp32, so one
  // rounding gives the correctly rounded sum.
  for (int64_t i = 0; i < rows * hidden; ++i) residual[i] = round_to_dtype(x[i] + residual[i], dtype);
  rms_norm(residual, weight, rows, hidden, eps, y);
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

#endif  // NPUKIT_GOLDEN_add_rms_norm


// ---- Section NPUKIT_GATE_HOOKS_add_rms_norm: the gate's hooks, compiled once, into the gate (npukit_gate);
// libnpukit.so links none of this.
#ifdef NPUKIT_GATE_HOOKS_add_rms_norm

// The gate's hooks for add_rms_norm: its golden cases and reference, tolerances and NaN/Inf
// contract (runtime/ops/add_rms_norm.cpp is the rest of the op; libnpukit.so links none of this).
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  std::vector<double> residual = c.inputs.at("residual").values, y(x.values.size());
  golden::add_rms_norm(x.values.data(), residual.data(), c.inputs.at("weight").values.data(), c.dims.at("rows"),
                       c.dims.at("hidden"), std::stod(c.params.at("eps")), x.dtype, y.data());
  return {{"y", std::move(y)}, {"residual", std::move(residual)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string& output, DType dtype) {
  golden::Tolerance t;
  if (output == "residual") {
    // One fp32 addition of two values of the storage type, rounded once to it: the
    // correctly rounded sum (fp32 carries more than 2·11 + 2 bits), bit for bit.
    t.exact = true;
    t.reason = "x + residual rounded once to the storage type: the correctly rounded sum, bit-exact";
    return t;
  }
  // y is rms_norm of the rounded sum, which the golden rounds the same way: rms_norm's
  // tolerance (golden/rms_norm.h, its gate hooks).
  if (dtype == DType::float16) {
    t.rtol = 1e-3;
    t.atol = 1e-5;
    t.reason = "rms_norm of the bit-exact sum: fp32 arithmetic, one rounding to fp16, at most 1 fp16 ULP";
  } else {
    t.rtol = 1e-5;
    t.atol = 1e-6;
    t.reason = "rms_norm of the bit-exact sum: sum of squares accumulated in fp64, three fp32 roundings, a few fp32 ULPs";
  }
  return t;
}

}  // namespace

GateHooks add_rms_norm_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::add_rms_norm_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract =
      "residual becomes x + residual in its dtype (IEEE: NaN stays NaN, +Inf + -Inf is NaN, a sum beyond the "
      "dtype's range is +-Inf); y is rms_norm of that new residual, with rms_norm's contract per row: a NaN "
      "makes the row NaN, an Inf makes its element NaN and the rest of the row 0, an all-zero row with "
      "eps = 0 is NaN. The sum of squares is accumulated in fp64, so rows beyond fp32's (or fp16's) range are still right.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_add_rms_norm
