// Operator parameters: declared once per op (ParamSpec), parsed and range-checked once.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "runtime/name_less.h"

namespace npukit {

struct ParamSpec {
  enum class Kind { real, integer, choice };
  std::string name;
  Kind kind = Kind::real;
  std::string default_value;  // as text, parsed like user input
  double min = -1e308, max = 1e308;  // inclusive, for real and integer
  std::vector<std::string> choices;   // for choice
  std::string doc;
};

using ParamValue = std::variant<double, int64_t, std::string>;

class Params {
 public:
  double real(std::string_view name) const;
  int64_t integer(std::string_view name) const;
  const std::string& choice(std::string_view name) const;
  void set(const std::string& name, ParamValue v) { values_[name] = std::move(v); }
  const std::map<std::string, ParamValue, NameLess>& values() const { return values_; }

 private:
  const ParamValue& get(std::string_view name) const;
  std::map<std::string, ParamValue, NameLess> values_;
};

// Parses `text` for `spec`; an error names the op, the parameter, the value and the rule.
ParamValue parse_param(const std::string& op, const ParamSpec& spec, const std::string& text);

// Every declared parameter: the given text where present, else the default. An undeclared
// name is an error that lists the declared ones.
Params resolve_params(const std::string& op, const std::vector<ParamSpec>& specs,
                      const std::map<std::string, std::string>& given);

std::string param_text(const ParamValue& v);

}  // namespace npukit
