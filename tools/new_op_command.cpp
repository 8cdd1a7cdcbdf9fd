// `npukit new-op NAME --dir D`: the skeleton of an operator plug-in project (the templates
// under tools/new_op/templates, embedded at build time): every file of an op at the path it
// has in the kit's tree, a CMakeLists.txt that builds it against the installed kit, a
// placeholder algorithm that runs, a golden reference that refuses to pass until written,
// and a README of the steps (docs/authoring.md).
#include <sys/stat.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "npukit/kit_version.h"
#include "runtime/error.h"
#include "runtime/registry.h"
#include "tools/commands.h"

namespace npukit::cli {

// tools/CMakeLists.txt generates this table: each template's path (with OP for the op's
// name) and its text (with {{op}}, {{Op}} and {{kit_version}}).
struct NewOpTemplate {
  const char* path;
  const char* text;
};
extern const NewOpTemplate kNewOpTemplates[];
extern const size_t kNewOpTemplateCount;

namespace {

namespace fs = std::filesystem;

void check_name(const std::string& name) {
  bool ok = !name.empty() && name.size() <= 64 && std::islower(static_cast<unsigned char>(name[0]));
  for (char c : name) ok = ok && (std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_');
  if (!ok)
    fail(Errc::invalid_argument,
         "new-op {}: an op name is 1 to 64 lower-case letters, digits and '_', starting with a letter", name);
  for (const OpSpec* op : all_ops()) {
    if (op->name == name) fail(Errc::invalid_argument, "new-op {}: is a shipped op; op names must be unique", name);
  }
}

std::string camel(const std::string& name) {
  std::string out;
  bool up = true;
  for (char c : name) {
    if (c == '_') {
      up = true;
      continue;
    }
    out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    up = false;
  }
  return out;
}

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
  return s;
}

// "0.2.0" -> "0.2": what find_package(npukit X.Y) accepts (SameMinorVersion).
std::string minor_version() {
  const std::string v = NPUKIT_KIT_VERSION;
  const size_t second = v.find('.', v.find('.') + 1);
  return second == std::string::npos ? v : v.substr(0, second);
}

// The prefix this npukit is installed under (bin/npukit beside lib/cmake/npukit), or "".
std::string installed_prefix() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const fs::path prefix = exe.parent_path().parent_path();
  for (const char* lib : {"lib", "lib64"}) {
    if (fs::exists(prefix / lib / "cmake" / "npukit" / "npukitConfig.cmake", ec)) return prefix.string();
  }
  return "";
}

int new_op(const std::string& name, const std::string& dir) {
  check_name(name);
  std::error_code ec;
  if (fs::exists(dir, ec) && !(fs::is_directory(dir, ec) && fs::is_empty(dir, ec)))
    fail(Errc::invalid_argument, "--dir {}: exists and is not an empty directory; new-op writes a new project", dir);
  const std::map<std::string, std::string> words = {
      {"{{op}}", name}, {"{{Op}}", camel(name)}, {"{{kit_version}}", minor_version()}};
  for (size_t i = 0; i < kNewOpTemplateCount; ++i) {
    const fs::path path = fs::path(dir) / replace_all(kNewOpTemplates[i].path, "OP", name);
    fs::create_directories(path.parent_path(), ec);
    if (ec) fail(Errc::invalid_argument, "--dir {}: cannot create {} ({})", dir, path.parent_path().string(), ec.message());
    std::string text = kNewOpTemplates[i].text;
    for (const auto& [from, to] : words) text = replace_all(text, from, to);
    std::ofstream out(path);
    out << text;
    out.close();
    if (!out) fail(Errc::invalid_argument, "--dir {}: cannot write {}", dir, path.string());
  }
  const std::string prefix = installed_prefix();
  std::cout << "wrote the operator plug-in project " << name << " (" << kNewOpTemplateCount << " files) to " << dir
            << "\nnext (" << dir << "/README.md):\n  cmake -S " << dir << " -B " << dir << "/build -DCMAKE_PREFIX_PATH="
            << (prefix.empty() ? "<the kit's install prefix>" : prefix) << "\n  cmake --build " << dir
            << "/build -j\n  npukit gate --plugin " << dir << "/build/libnpukit_op_" << name << ".so --op " << name
            << "   # exit 2 until golden/" << name << ".cpp is written\n";
  return 0;
}

}  // namespace

void add_new_op(CLI::App& app, int& exit_code) {
  auto name = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  CLI::App* sub = app.add_subcommand("new-op", "write the skeleton of an operator plug-in project (docs/authoring.md)");
  sub->add_option("name", *name, "the op's name: lower-case letters, digits and '_'")->required();
  sub->add_option("--dir", *dir, "the project's directory (new, or empty)")->required();
  sub->callback([name, dir, &exit_code] { exit_code = new_op(*name, *dir); });
}

}  // namespace npukit::cli
