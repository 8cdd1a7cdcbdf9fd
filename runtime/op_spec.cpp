// The lookups of OpSpec and Call that kernels make: apart from validation (runtime/bind.cpp)
// and the registry, so that an operator plug-in links them without either
// (runtime/operator_plugin.h).
#include <string>
#include <string_view>

#include "runtime/error.h"
#include "runtime/op_spec.h"

namespace npukit {
namespace {

// Out of line and cold: the lookups that call it run on every kernel call.
[[noreturn, gnu::noinline, gnu::cold]] void call_lacks(const char* what, std::string_view name) {
  fail(Errc::internal, "call has no {} '{}'", what, name);
}

}  // namespace

const TensorView& Call::tensor(std::string_view name) const {
  if (slots.set) {
    const std::vector<TensorSpec>& specs = op->tensors;
    for (size_t i = 0; i < specs.size(); ++i) {
      const std::string& s = specs[i].name;
      if (s.size() != name.size()) continue;
      size_t c = 0;
      while (c < s.size() && s[c] == name[c]) ++c;
      if (c < s.size()) continue;
      if (slots.at[i] == nullptr) call_lacks("tensor", name);
      return *slots.at[i];
    }
  }
  auto it = find_name(tensors, name);
  if (it == tensors.end()) call_lacks("tensor", name);
  return it->second;
}

int64_t Call::dim(std::string_view name) const {
  auto it = find_name(dims, name);
  if (it == dims.end()) call_lacks("dimension", name);
  return it->second;
}

const TensorSpec& OpSpec::tensor(const std::string& tensor_name) const {
  for (const TensorSpec& s : tensors) {
    if (s.name == tensor_name) return s;
  }
  fail(Errc::internal, "{} has no tensor '{}'", name, tensor_name);
}

}  // namespace npukit
