#include <utility>

#include "golden/case_builder.h"
#include "golden/{{op}}.h"

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
