// How an npukit op appears in PyTorch, derived from its description (npukit_op_describe)
// alone, so that a new op needs no code here: the schema text, which schema argument is
// which npukit tensor or parameter, and where each output's sizes and dtype come from.
// No torch headers: this is the part of the extension that compiles fast.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "npukit/npukit.h"

namespace npukit::torch_ext {

// One schema argument: an npukit tensor (by slot), a constant held by a packed-weight
// object, a parameter (by index), or an output the caller allocated (the out= overloads).
struct Arg {
  enum class Kind { tensor, constant, param, output } kind;
  size_t index;
};

// An output's size along one axis: the first present input with that dimension name.
struct DimSource {
  std::vector<std::pair<size_t, size_t>> from;  // (input slot, axis), required inputs first
};

struct OutputRule {
  size_t slot;
  std::vector<DimSource> dims;
  enum class DType { fixed, same_as, param } dtype_rule;
  DLDataType dtype;      // fixed, and same_as's fallback when that input is absent
  size_t from = 0;       // same_as: the input slot; param: the parameter index
};

struct OpBinding {
  const npukit_op_info* info = nullptr;
  std::string name;      // the torch op: the npukit name, with "_" when it updates inputs in place
  // "", "packed" (its constants as packed-weight objects), "out" (outputs given, keyword-only,
  // torch's out= convention), "packed_out".
  std::string overload;
  std::string schema;    // for torch::schema, e.g. "npukit::rms_norm(Tensor x, ...) -> Tensor y"
  std::vector<Arg> args;
  std::vector<OutputRule> outputs;  // the schema's returns, in order
};

// The overloads of `info`: the plain one and "out", and "packed" and "packed_out" when the op
// has constants, whose arguments then have type `constant_type` (a TorchScript class name).
std::vector<OpBinding> bindings_of(const npukit_op_info& info, const std::string& ns,
                                   const std::string& constant_type);

// The DLPack dtype an npukit dtype name ("float32", "int8") stands for; false if none.
bool dtype_named(const char* name, DLDataType* out);

// A real parameter's value as npukit parses it: the shortest text that reads back as `v`,
// so that the prepared op sees exactly the double torch passed.
std::string real_text(double v);

}  // namespace npukit::torch_ext
