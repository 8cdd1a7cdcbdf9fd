#include "golden/case_builder.h"

#include <stdexcept>

#include "golden/half.h"

namespace npukit::golden {

std::string sizes_text(std::initializer_list<std::pair<const char*, int64_t>> sizes) {
  std::string s;
  for (const auto& [name, value] : sizes) s += (s.empty() ? "" : " ") + std::string(name) + "=" + std::to_string(value);
  return s;
}

CaseBuilder::CaseBuilder(std::string_view op, InputClass cls, DType dtype)
    : prefix_(std::string(op) + "/" + std::string(input_class_name(cls)) + "/"), cls_(cls), dtype_(dtype) {}

Case& CaseBuilder::add(std::string name, std::map<std::string, int64_t> dims, std::map<std::string, std::string> params) {
  Case c;
  c.name = std::move(name);
  c.dims = std::move(dims);
  c.params = std::move(params);
  cases_.push_back(std::move(c));
  return cases_.back();
}

void CaseBuilder::note(std::string_view text) { last().name += " " + std::string(text); }

Array CaseBuilder::normal(std::string_view what, std::vector<int64_t> shape, double mean, double stddev) const {
  return normal(what, dtype_, std::move(shape), mean, stddev);
}

Array CaseBuilder::normal(std::string_view what, DType dtype, std::vector<int64_t> shape, double mean,
                          double stddev) const {
  return make_normal(stream(what), index(), dtype, std::move(shape), mean, stddev);
}

Array CaseBuilder::uniform(std::string_view what, std::vector<int64_t> shape, double lo, double hi) const {
  return uniform(what, dtype_, std::move(shape), lo, hi);
}

Array CaseBuilder::uniform(std::string_view what, DType dtype, std::vector<int64_t> shape, double lo, double hi) const {
  return make_uniform(stream(what), index(), dtype, std::move(shape), lo, hi);
}

Array CaseBuilder::integers(std::string_view what, DType dtype, std::vector<int64_t> shape, int64_t lo,
                            int64_t hi) const {
  return make_integers(stream(what), index(), dtype, std::move(shape), lo, hi);
}

void CaseBuilder::set(const std::string& tensor, std::initializer_list<int64_t> index, double v) {
  Array& a = input(tensor);
  if (index.size() != a.shape.size()) {
    throw std::logic_error("CaseBuilder::set: " + tensor + " has rank " + std::to_string(a.shape.size()) + ", not " +
                           std::to_string(index.size()));
  }
  int64_t flat = 0;
  size_t axis = 0;
  for (int64_t i : index) {
    if (i < 0 || i >= a.shape[axis]) {
      throw std::out_of_range("CaseBuilder::set: " + tensor + " index " + std::to_string(i) + " on axis " +
                              std::to_string(axis) + " of extent " + std::to_string(a.shape[axis]));
    }
    flat = flat * a.shape[axis++] + i;
  }
  a.values[static_cast<size_t>(flat)] = round_to_dtype(v, a.dtype);
}

void CaseBuilder::fill(const std::string& tensor, double v, Slice s) {
  Array& a = input(tensor);
  const double r = round_to_dtype(v, a.dtype);
  for_slice(a, s, [&](size_t k) { a.values[k] = r; });
}

void CaseBuilder::scale(const std::string& tensor, double factor, Slice s) {
  Array& a = input(tensor);
  for_slice(a, s, [&](size_t k) { a.values[k] = round_to_dtype(a.values[k] * factor, a.dtype); });
}

void CaseBuilder::signed_uniform(const std::string& tensor, double lo, double hi, Slice s, Sign sign) {
  Array& a = input(tensor);
  const Array mag = uniform(tensor + "_magnitude", a.dtype, a.shape, lo, hi);
  // Magnitudes are in the dtype already, and so are their negatives.
  if (sign != Sign::coin) {
    const bool negative = sign == Sign::negative;
    for_slice(a, s, [&](size_t k) { a.values[k] = negative ? -mag.values[k] : mag.values[k]; });
    return;
  }
  const Array coin = integers(tensor + "_sign", a.dtype, a.shape, 0, 1);
  for_slice(a, s, [&](size_t k) { a.values[k] = coin.values[k] != 0 ? -mag.values[k] : mag.values[k]; });
}

}  // namespace npukit::golden
