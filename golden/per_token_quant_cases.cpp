#include "golden/per_token_quant.h"

#include <utility>

#include "golden/case_builder.h"

namespace npukit::golden {
namespace {

class Builder : public CaseBuilder {
 public:
  using CaseBuilder::CaseBuilder;

  // Appends a case with a ~ N(0, 1); the edits of CaseBuilder then adjust it.
  void add(int64_t T, int64_t K, std::string_view note = "") {
    CaseBuilder::add(sizes_text({{"T", T}, {"K", K}}), {{"T", T}, {"K", K}});
    if (!note.empty()) this->note(note);
    last().inputs["a"] = normal("a", {T, K}, 0, 1);
  }
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
  b.fill("a", 0.0, row(1));  // s = 0: q = 0, scale 0
  b.add(3, 100, "row2=const");
  b.fill("a", -0.75, row(2));  // every q = -127
  // max |a| = 127 makes s = 1 exactly, so a = n + 0.5 are exact ties: nearbyint rounds
  // them to even, round-half-away would not.
  b.add(2, 64, "row0=ties");
  for (int64_t c = 0; c < 64; ++c) b.set("a", {0, c}, c == 0 ? 127.0 : double(c % 9) - 4.0 + 0.5);
  b.add(3, 64, "row1=negative max");
  b.set("a", {1, 5}, -50.0);
  // One outlier: its q is ±127, the row's others fall to |q| ≤ 1.
  b.add(4, 512, "row3=outlier");
  b.set("a", {3, 200}, 1000.0);
}

void overflow_cases(Builder& b) {
  if (b.dtype() == DType::float16) {
    b.add(4, 4096, "|a|~6e4");
    b.signed_uniform("a", 50000, 65504);
    b.add(3, 64, "|a|=65504");
    b.signed_uniform("a", 65504, 65504);
    b.add(3, 1000, "fp16 subnormal");
    b.signed_uniform("a", 6e-8, 6e-5);
    return;
  }
  b.add(4, 4096, "|a|~3e38");
  b.signed_uniform("a", 1e38, 3.4e38);
  b.add(3, 1000, "|a|~1e-38");
  b.signed_uniform("a", 0.5e-38, 1.5e-38);
  // s = max / 127 of a subnormal row is a smaller subnormal; of the smallest ones, 0.
  b.add(3, 64, "subnormal rows");
  b.signed_uniform("a", 1e-42, 1e-40);
  b.scale("a", 1e-4, row(2));
}

void nan_inf_cases(Builder& b) {
  b.add(6, 4096, "nan/+inf/-inf in rows 1/3/4");
  b.set("a", {1, 17}, kNaN);
  b.set("a", {3, 100}, kInf);
  b.set("a", {4, 4095}, -kInf);
  b.add(7, 33, "nan/+inf/-inf in rows 1/3/5");
  b.set("a", {1, 0}, kNaN);
  b.set("a", {3, 16}, kInf);
  b.set("a", {5, 32}, -kInf);
  b.add(4, 4096, "+inf,-inf in row 0");
  b.set("a", {0, 5}, kInf);
  b.set("a", {0, 6}, -kInf);
  b.add(5, 129, "nan last in row 2");
  b.set("a", {2, 128}, kNaN);
}

void shape_cases(Builder& b) {
  for (auto [T, K] : {std::pair<int64_t, int64_t>{1, 1}, {129, 1}, {3, 3}, {65, 3}, {2, 31}, {100, 31}, {5, 33},
                      {7, 127}, {1, 129}, {16, 129}, {3, 1000}, {1, 4097}, {9, 4097}, {2, 8191}, {1, 8191}}) {
    b.add(T, K);
  }
}

}  // namespace

std::vector<Case> per_token_quant_cases(InputClass input_class, DType dtype) {
  if (!dtype_is_float(dtype)) return {};
  Builder b("per_token_quant", input_class, dtype);
  build_class<Builder>(b, {normal_cases, boundary_cases, overflow_cases, nan_inf_cases, shape_cases});
  return b.take();
}

}  // namespace npukit::golden
