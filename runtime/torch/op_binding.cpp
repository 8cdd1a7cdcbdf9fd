#include "runtime/torch/op_binding.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

namespace npukit::torch_ext {
namespace {

std::string schema_default(const npukit_param_info& p) {
  switch (p.kind) {
    case NPUKIT_PARAM_REAL: {  // as the registry writes it ("1e-5"), as a float literal
      const std::string text = p.default_value;
      return text.find_first_of(".eE") == std::string::npos ? text + ".0" : text;
    }
    case NPUKIT_PARAM_INTEGER: return p.default_value;
    case NPUKIT_PARAM_CHOICE: return std::string("\"") + p.default_value + "\"";
  }
  return p.default_value;
}

const char* schema_type(const npukit_param_info& p) {
  switch (p.kind) {
    case NPUKIT_PARAM_REAL: return "float";
    case NPUKIT_PARAM_INTEGER: return "int";
    case NPUKIT_PARAM_CHOICE: return "str";
  }
  return "str";
}

OutputRule output_rule(const npukit_op_info& info, size_t slot) {
  const npukit_tensor_info& t = info.tensors[slot];
  OutputRule r{slot, {}, OutputRule::DType::fixed, t.dtypes[0], 0};
  for (size_t a = 0; a < t.ndim; ++a) {
    DimSource src;
    for (int pass = 0; pass < 2; ++pass) {  // required inputs first: they are always there
      for (size_t i = 0; i < info.n_tensors; ++i) {
        const npukit_tensor_info& in = info.tensors[i];
        if (in.role == NPUKIT_OUTPUT || (in.optional != 0) != (pass == 1)) continue;
        for (size_t b = 0; b < in.ndim; ++b) {
          if (std::strcmp(in.dims[b], t.dims[a]) == 0) src.from.emplace_back(i, b);
        }
      }
    }
    r.dims.push_back(std::move(src));
  }
  if (*t.dtype_param) {
    for (size_t p = 0; p < info.n_params; ++p) {
      if (std::strcmp(info.params[p].name, t.dtype_param) == 0) r.dtype_rule = OutputRule::DType::param, r.from = p;
    }
  } else if (*t.same_dtype_as) {
    for (size_t i = 0; i < info.n_tensors; ++i) {
      if (std::strcmp(info.tensors[i].name, t.same_dtype_as) == 0) r.dtype_rule = OutputRule::DType::same_as, r.from = i;
    }
  }
  return r;
}

OpBinding binding(const npukit_op_info& info, const std::string& ns, bool packed, bool out,
                  const std::string& constant_type) {
  OpBinding b;
  b.info = &info;
  b.name = info.name;
  bool in_place = false;
  for (size_t i = 0; i < info.n_tensors; ++i) in_place |= info.tensors[i].role == NPUKIT_INOUT;
  if (in_place) b.name += "_";  // torch's mark of an op that updates its arguments
  b.overload = packed && out ? "packed_out" : packed ? "packed" : out ? "out" : "";
  std::string args;
  auto add = [&](const std::string& text) { args += (args.empty() ? "" : ", ") + text; };
  // Required tensors in the op's order, then optional ones (default None), then parameters
  // (with their defaults): Python callers can leave out everything that has a default.
  char alias = 'a';
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < info.n_tensors; ++i) {
      const npukit_tensor_info& t = info.tensors[i];
      if (t.role == NPUKIT_OUTPUT || (t.optional != 0) != (pass == 1)) continue;
      if (packed && t.constant) {
        b.args.push_back({Arg::Kind::constant, i});
        add(constant_type + (t.optional ? "? " : " ") + t.name + (t.optional ? "=None" : ""));
        continue;
      }
      b.args.push_back({Arg::Kind::tensor, i});
      if (t.role == NPUKIT_INOUT) {
        add(std::string("Tensor(") + alias++ + "!) " + t.name);
      } else {
        add(std::string(t.optional ? "Tensor? " : "Tensor ") + t.name + (t.optional ? "=None" : ""));
      }
    }
  }
  for (size_t p = 0; p < info.n_params; ++p) {
    b.args.push_back({Arg::Kind::param, p});
    add(std::string(schema_type(info.params[p])) + " " + info.params[p].name + "=" + schema_default(info.params[p]));
  }
  // The out= overload (torch's convention for preallocated results): the outputs as
  // keyword-only written arguments, returned as they came; nothing is allocated.
  std::string returns;
  bool keyword_only = false;
  for (size_t i = 0; i < info.n_tensors; ++i) {
    if (info.tensors[i].role != NPUKIT_OUTPUT) continue;
    b.outputs.push_back(output_rule(info, i));
    if (out) {
      const std::string annotation = std::string("Tensor(") + alias++ + "!)";
      b.args.push_back({Arg::Kind::output, i});
      add(std::string(keyword_only ? "" : "*, ") + annotation + " " + info.tensors[i].name);
      keyword_only = true;
      returns += (returns.empty() ? "" : ", ") + annotation;
    } else {
      returns += (returns.empty() ? "" : ", ") + std::string("Tensor ") + info.tensors[i].name;
    }
  }
  if (b.outputs.size() != 1) returns = "(" + returns + ")";
  b.schema = ns + "::" + b.name + (b.overload.empty() ? "" : "." + b.overload) + "(" + args + ") -> " + returns;
  return b;
}

}  // namespace

std::vector<OpBinding> bindings_of(const npukit_op_info& info, const std::string& ns,
                                   const std::string& constant_type) {
  bool constants = false;
  for (size_t i = 0; i < info.n_tensors; ++i) constants |= info.tensors[i].constant != 0;
  std::vector<OpBinding> out;
  for (bool packed : {false, true}) {
    if (packed && !constants) continue;
    for (bool to_out : {false, true}) out.push_back(binding(info, ns, packed, to_out, constant_type));
  }
  return out;
}

bool dtype_named(const char* name, DLDataType* out) {
  struct Named {
    const char* prefix;
    uint8_t code;
  };
  for (const Named& n : {Named{"float", kDLFloat}, Named{"uint", kDLUInt}, Named{"int", kDLInt}}) {
    const size_t len = std::strlen(n.prefix);
    if (std::strncmp(name, n.prefix, len) != 0) continue;
    char* end = nullptr;
    const long bits = std::strtol(name + len, &end, 10);
    if (end == name + len || *end != '\0' || bits <= 0 || bits > 64) return false;
    *out = DLDataType{n.code, static_cast<uint8_t>(bits), 1};
    return true;
  }
  return false;
}

std::string real_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", v);  // the shortest text that reads back as v
  // TorchScript reads "10000" as an int: a float default needs a point or an exponent.
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

}  // namespace npukit::torch_ext
