// The input classes every operator's golden cases come in, and their names: what
// `npukit gate --class` takes and every report prints. One table, so that the enum, the
// names and the gate's order cannot drift apart.
#pragma once

#include <array>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace npukit::golden {

// Every operator has the same input classes, so a gate run is comparable across ops.
enum class InputClass { normal, boundary, overflow, nan_inf, shape };

// Each class and its name, in the order the gate runs and reports them.
inline constexpr std::array<std::pair<InputClass, std::string_view>, 5> kInputClasses = {{
    {InputClass::normal, "normal"},
    {InputClass::boundary, "boundary"},
    {InputClass::overflow, "overflow"},
    {InputClass::nan_inf, "nan_inf"},
    {InputClass::shape, "shape"},
}};

constexpr std::string_view input_class_name(InputClass c) {
  for (const auto& [cls, name] : kInputClasses) {
    if (cls == c) return name;
  }
  return "?";
}

// The class called `name`, or nullopt.
constexpr std::optional<InputClass> find_input_class(std::string_view name) {
  for (const auto& [cls, n] : kInputClasses) {
    if (n == name) return cls;
  }
  return std::nullopt;
}

inline std::ostream& operator<<(std::ostream& os, InputClass c) { return os << input_class_name(c); }

// Every class, in kInputClasses' order.
inline std::vector<InputClass> all_input_classes() {
  std::vector<InputClass> out;
  for (const auto& entry : kInputClasses) out.push_back(entry.first);
  return out;
}

// Their names, in the same order (what the CLI checks --class against).
inline std::vector<std::string> input_class_names() {
  std::vector<std::string> out;
  for (const auto& entry : kInputClasses) out.emplace_back(entry.second);
  return out;
}

}  // namespace npukit::golden
