// Golden {{op}} in double; then (below) its input classes, the cases the gate runs a kernel
// on and checks against the reference, and the gate's hooks. Plain C++: a reference that
// shares code with the kernel it checks checks nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

// Row-major x and y of [rows, cols]. Say here what it computes and its NaN/Inf contract.
void {{op}}(const double* x, int64_t rows, int64_t cols, double alpha, double* y);

// The cases of one input class for x of `dtype` (its section below says which).
std::vector<Case> {{op}}_cases(InputClass input_class, DType dtype);

}  // namespace npukit::golden

// ---- Section NPUKIT_GOLDEN_{{op}}: the reference and the input classes' cases, compiled once, into
// the gate companion (npukit_add_operator writes its unit).
#ifdef NPUKIT_GOLDEN_{{op}}

namespace npukit::golden {

void {{op}}(const double*, int64_t, int64_t, double, double*) {
  // Until this is written the gate checks nothing of {{op}} and says so (exit 2).
  throw NotWritten("golden/{{op}}.h: {{op}}() is a stub; write the reference in double");
}

}  // namespace npukit::golden

#include <utility>

#include "golden/case_builder.h"

namespace npukit::golden {
namespace {

class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // Appends a case with the default distributions; the edits of each class then adjust it.
  void add(int64_t rows, int64_t cols, std::string_view note = "") {
    CaseBuilder::add(sizes_text({{"rows", rows}, {"cols", cols}}), {{"rows", rows}, {"cols", cols}},
                     {{"alpha", number_text(0.5)}});
    if (!note.empty()) this->note(note);
    last().inputs["x"] = normal("x", {rows, cols}, 0, 1);
  }
};

// Decode and prefill shapes of the models the op serves.
void normal_cases(Builder& b) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 4096}, {16, 4096}, {128, 1024}}) b.add(rows, cols);
}

// Sizes around the vector widths and tile edges; parameters at their limits.
void boundary_cases(Builder& b) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 1}, {3, 63}, {17, 64}, {5, 65}}) b.add(rows, cols);
}

// Values near the dtype's largest (and smallest) magnitudes.
void overflow_cases(Builder& b) {
  b.add(4, 1024, "|x| near max");
  b.signed_uniform("x", b.dtype() == DType::float16 ? 50000 : 1e38, b.dtype() == DType::float16 ? kFloat16Max : kFloat32Max);
}

// NaN, +Inf and -Inf where the contract says what must come out.
void nan_inf_cases(Builder& b) {
  b.add(4, 64, "nan/+inf/-inf in rows 1/2/3");
  b.set("x", {1, 3}, kNaN);
  b.set("x", {2, 5}, kInf);
  b.set("x", {3, 7}, -kInf);
}

// Odd sizes: tails of every vector and tile loop.
void shape_cases(Builder& b) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 3}, {7, 31}, {9, 129}, {33, 1001}}) b.add(rows, cols);
}

}  // namespace

std::vector<Case> {{op}}_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("{{op}}", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden

#endif  // NPUKIT_GOLDEN_{{op}}


// ---- Section NPUKIT_GATE_HOOKS_{{op}}: the gate's hooks, compiled once, into the gate companion
// (npukit_add_operator writes its unit).
#ifdef NPUKIT_GATE_HOOKS_{{op}}

// The gate's hooks for {{op}}: its golden cases and reference, tolerances and NaN/Inf
// contract. They make the plug-in's gate companion; the op's own library links none of it.
#include "tools/gate/gate_hooks.h"

namespace npukit {
namespace {

std::map<std::string, std::vector<double>> reference(const golden::Case& c) {
  const golden::Array& x = c.inputs.at("x");
  std::vector<double> y(x.values.size());
  golden::{{op}}(x.values.data(), c.dims.at("rows"), c.dims.at("cols"), std::stod(c.params.at("alpha")), y.data());
  return {{"y", std::move(y)}};
}

golden::Tolerance tolerance(const golden::Case&, const std::string&, DType dtype) {
  // Declare the op's own bound with its reason (docs/gating.md, Tolerances); the default
  // is a start, not an argument.
  golden::Tolerance t = golden::default_tolerance(dtype, /*reduction=*/false);
  t.reason = "the default for an elementwise op: replace it with the op's error bound";
  return t;
}

}  // namespace

GateHooks {{op}}_gate_hooks() {
  GateHooks gate;
  gate.dtypes = {DType::float32, DType::float16};
  gate.cases = golden::{{op}}_cases;
  gate.reference = reference;
  gate.tolerance = tolerance;
  gate.nan_contract = "Say what a NaN or an Inf in each input does to which outputs.";
  return gate;
}

}  // namespace npukit

#endif  // NPUKIT_GATE_HOOKS_{{op}}
