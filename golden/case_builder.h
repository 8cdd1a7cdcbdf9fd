// The one builder behind every operator's golden cases (golden/<op>.h): it
// appends cases, draws their tensors from per-case streams and edits them (single
// elements, slices, NaN/Inf and boundary fills), values always rounded to the tensor's
// dtype. An op's case file says only what is particular to it: its shapes, its defaults and
// the edits of each input class.
//
// Streams: tensor (or draw) `what` of case i of class `cls` comes from
// case_seed("<op>/<cls>/<what>", i, chunk), i being the case's position in the class's list.
// So the same (class, dtype) always gives the same bits, and no two tensors, cases or classes
// share a stream.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "golden/array.h"
#include "golden/cases.h"
#include "npukit/dtype.h"

namespace npukit::golden {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kFloat16Max = 65504;
inline constexpr double kFloat32Max = std::numeric_limits<float>::max();
inline constexpr int64_t kAll = std::numeric_limits<int64_t>::max();  // "to the end" in a Slice

// The elements of a tensor whose index along `axis` lies in [lo, hi), every other axis whole.
struct Slice {
  int axis = 0;
  int64_t lo = 0, hi = kAll;
};
inline Slice rows(int64_t lo, int64_t hi) { return {0, lo, hi}; }
inline Slice row(int64_t r) { return {0, r, r + 1}; }

enum class Sign { coin, positive, negative };

// "rows=3 hidden=4097": a case's name from its sizes, in the order given.
std::string sizes_text(std::initializer_list<std::pair<const char*, int64_t>> sizes);

class CaseBuilder {
 public:
  // `op` names the streams (an op may use more than one prefix, e.g. a second weight type);
  // `dtype` is the dtype the class is asked for, the default of every draw.
  CaseBuilder(std::string_view op, InputClass cls, DType dtype);

  InputClass input_class() const { return cls_; }
  DType dtype() const { return dtype_; }

  // Appends a case; the draws and edits below apply to it until the next add.
  Case& add(std::string name, std::map<std::string, int64_t> dims, std::map<std::string, std::string> params = {});
  // Appends " <text>" to the last case's name.
  void note(std::string_view text);
  Case& last() { return cases_.back(); }
  Array& input(const std::string& tensor) { return last().inputs.at(tensor); }
  std::vector<Case>& all() { return cases_; }

  // The stream "<op>/<class>/<what>" and the last case's index in it.
  std::string stream(std::string_view what) const { return prefix_ + std::string(what); }
  uint64_t index() const { return cases_.size() - 1; }

  // Draws for the last case from stream `what`, rounded to `dtype` (default: the class's).
  Array normal(std::string_view what, std::vector<int64_t> shape, double mean, double stddev) const;
  Array normal(std::string_view what, DType dtype, std::vector<int64_t> shape, double mean, double stddev) const;
  Array uniform(std::string_view what, std::vector<int64_t> shape, double lo, double hi) const;
  Array uniform(std::string_view what, DType dtype, std::vector<int64_t> shape, double lo, double hi) const;
  Array integers(std::string_view what, DType dtype, std::vector<int64_t> shape, int64_t lo, int64_t hi) const;

  // Edits of the last case's tensor, values rounded to the tensor's dtype.
  void set(const std::string& tensor, std::initializer_list<int64_t> index, double v);  // one element
  void fill(const std::string& tensor, double v, Slice s = {});
  void scale(const std::string& tensor, double factor, Slice s = {});
  // The slice becomes ±U[lo, hi]: magnitudes drawn for the whole tensor from the stream
  // "<tensor>_magnitude", signs (Sign::coin) from "<tensor>_sign", in the tensor's dtype.
  void signed_uniform(const std::string& tensor, double lo, double hi, Slice s = {}, Sign sign = Sign::coin);

  std::vector<Case> take() { return std::move(cases_); }

  // Calls f(k) for the flat index k of every element of `a` in slice `s`, in order.
  template <typename F>
  static void for_slice(const Array& a, const Slice& s, F f) {
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < s.axis; ++k) outer *= a.shape.at(static_cast<size_t>(k));
    for (size_t k = static_cast<size_t>(s.axis) + 1; k < a.shape.size(); ++k) inner *= a.shape[k];
    const int64_t n = a.shape.at(static_cast<size_t>(s.axis));
    const int64_t lo = s.lo < 0 ? 0 : s.lo, hi = s.hi < n ? s.hi : n;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = lo; i < hi; ++i) {
        for (int64_t k = 0; k < inner; ++k) f(static_cast<size_t>((o * n + i) * inner + k));
      }
    }
  }

 private:
  std::string prefix_;
  InputClass cls_;
  DType dtype_;
  std::vector<Case> cases_;
};

// An op's case generator, one function per input class: build_class calls the one of the
// builder's class.
template <class Builder>
struct ClassCases {
  void (*normal)(Builder&);
  void (*boundary)(Builder&);
  void (*overflow)(Builder&);
  void (*nan_inf)(Builder&);
  void (*shape)(Builder&);
};

template <class Builder>
void build_class(Builder& b, const ClassCases<Builder>& per_class) {
  switch (b.input_class()) {
    case InputClass::normal: per_class.normal(b); break;
    case InputClass::boundary: per_class.boundary(b); break;
    case InputClass::overflow: per_class.overflow(b); break;
    case InputClass::nan_inf: per_class.nan_inf(b); break;
    case InputClass::shape: per_class.shape(b); break;
  }
}

}  // namespace npukit::golden
