#include "runtime/params.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "runtime/error.h"
#include "runtime/message.h"

namespace npukit {
namespace {

std::string fmt_num(double v) { return fmt::format("{:.9g}", v); }

// Out of line and cold: the lookups that call it run on every kernel call.
[[noreturn, gnu::noinline, gnu::cold]] void param_fault(std::string_view name, const char* fault) {
  fail(Errc::internal, "parameter '{}' {}", name, fault);
}

}  // namespace

const ParamValue& Params::get(std::string_view name) const {
  auto it = find_name(values_, name);
  if (it == values_.end()) param_fault(name, "was never resolved");
  return it->second;
}

double Params::real(std::string_view name) const {
  const ParamValue& v = get(name);
  if (auto* d = std::get_if<double>(&v)) return *d;
  if (auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  param_fault(name, "is not numeric");
}

int64_t Params::integer(std::string_view name) const {
  if (auto* i = std::get_if<int64_t>(&get(name))) return *i;
  param_fault(name, "is not an integer");
}

const std::string& Params::choice(std::string_view name) const {
  if (auto* s = std::get_if<std::string>(&get(name))) return *s;
  param_fault(name, "is not a choice");
}

ParamValue parse_param(const std::string& op, const ParamSpec& spec, const std::string& text) {
  const std::string where = op + ": parameter " + spec.name + "=" + text;
  switch (spec.kind) {
    case ParamSpec::Kind::choice: {
      for (const auto& c : spec.choices) {
        if (c == text) return text;
      }
      fail(Errc::invalid_argument, "{}: must be one of {}", where, join_names(spec.choices));
    }
    case ParamSpec::Kind::integer: {
      char* end = nullptr;
      errno = 0;
      long long v = std::strtoll(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || errno == ERANGE) {
        fail(Errc::invalid_argument, "{}: not an integer", where);
      }
      if (v < spec.min || v > spec.max) {
        fail(Errc::invalid_argument, "{}: must be in [{}, {}]", where, fmt_num(spec.min), fmt_num(spec.max));
      }
      return static_cast<int64_t>(v);
    }
    case ParamSpec::Kind::real: {
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0') fail(Errc::invalid_argument, "{}: not a number", where);
      if (errno == ERANGE && std::fabs(v) < 1.0) {
        fail(Errc::invalid_argument, "{}: underflows (nonzero but below the smallest normal double, 2.2e-308)", where);
      }
      if (!std::isfinite(v)) fail(Errc::invalid_argument, "{}: must be finite", where);
      if (v < spec.min || v > spec.max) {
        fail(Errc::invalid_argument, "{}: must be in [{}, {}]", where, fmt_num(spec.min), fmt_num(spec.max));
      }
      return v;
    }
  }
  fail(Errc::internal, "{}: unknown parameter kind", where);
}

Params resolve_params(const std::string& op, const std::vector<ParamSpec>& specs,
                      const std::map<std::string, std::string>& given) {
  for (const auto& [name, value] : given) {
    bool known = false;
    for (const auto& s : specs) known = known || s.name == name;
    if (!known) {
      const std::string list = join_names(specs, [](const ParamSpec& s) { return s.name; });
      fail(Errc::invalid_argument, "{}: unknown parameter '{}' ({})", op, name,
           list.empty() ? "it takes none" : "it takes: " + list);
    }
  }
  Params p;
  for (const auto& s : specs) {
    auto it = given.find(s.name);
    p.set(s.name, parse_param(op, s, it != given.end() ? it->second : s.default_value));
  }
  return p;
}

std::string param_text(const ParamValue& v) {
  if (auto* d = std::get_if<double>(&v)) return fmt_num(*d);
  if (auto* i = std::get_if<int64_t>(&v)) return fmt::format("{}", *i);
  return std::get<std::string>(v);
}

}  // namespace npukit
