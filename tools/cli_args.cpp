#include "tools/cli_args.h"

#include <fstream>
#include <sstream>

#include "runtime/error.h"

namespace npukit::cli {

std::pair<std::string, std::string> split_assignment(const std::string& s, const char* flag) {
  const size_t eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size()) {
    fail(Errc::invalid_argument, "{} {}: expected NAME=VALUE", flag, s);
  }
  return {s.substr(0, eq), s.substr(eq + 1)};
}

std::map<std::string, std::string> assignment_map(const std::vector<std::string>& items, const char* flag) {
  std::map<std::string, std::string> out;
  for (const std::string& item : items) {
    auto [name, value] = split_assignment(item, flag);
    if (!out.emplace(name, value).second) fail(Errc::invalid_argument, "{} {} given twice", flag, name);
  }
  return out;
}

std::map<std::string, int64_t> integer_assignments(const std::string& text, const char* flag) {
  std::map<std::string, int64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0) fail(Errc::invalid_argument, "{} {}: expected NAME=INTEGER", flag, item);
    const std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    size_t used = 0;
    int64_t v = 0;
    try {
      v = std::stoll(value, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != value.size())
      fail(Errc::invalid_argument, "{} {}: {} is not an integer", flag, item, value);
    if (!out.emplace(name, v).second) fail(Errc::invalid_argument, "{} {} given twice", flag, name);
  }
  return out;
}

std::string schedule_argument(const std::string& arg) {
  if (arg.empty() || arg[0] != '@') return arg;
  std::ifstream f(arg.substr(1));
  if (!f) fail(Errc::invalid_argument, "--schedule {}: cannot read {}", arg, arg.substr(1));
  std::stringstream ss;
  ss << f.rdbuf();
  std::string text = ss.str();
  const size_t b = text.find_first_not_of(" \t\r\n"), e = text.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : text.substr(b, e - b + 1);
}

}  // namespace npukit::cli
