#include "tools/plugins.h"

#include "runtime/error.h"
#include "runtime/plugin.h"
#include "tools/gate/external_impl.h"
#include "tools/gate/gate_plugin.h"
#include "tools/gate/shell_word.h"
#ifndef NPUKIT_NO_SIMULATOR
#include "schedules/npu/npu_plugin.h"
#endif

namespace npukit::cli {
namespace {

void check_loads(const std::string& path, const std::string& file) {
  if (file.empty()) return;
  const std::string f = file.find('/') == std::string::npos ? "./" + file : file;
  if (const std::string how = gate::loading_crashes(f); !how.empty())
    fail(Errc::internal, "--plugin {}: loading {} ended its process by {}; nothing was done", path, file, how);
}

}  // namespace

void add_plugin_option(CLI::App* sub, std::vector<std::string>& paths) {
  sub->add_option("--plugin", paths,
                  "load an operator plug-in (libnpukit_op_<op>.so, built with the CMake package's npukit_add_operator) "
                  "and its companions beside it; repeatable");
}

std::map<std::string, std::string> load_plugins(const std::vector<std::string>& paths) {
  std::map<std::string, std::string> flags;
  for (const std::string& path : paths) {
    check_loads(path, path);
    const LoadedPlugin& p = load_operator_plugin(path, "--plugin");
    check_loads(path, p.gate_path);
    load_gate_plugin(p, "--plugin");
#ifndef NPUKIT_NO_SIMULATOR
    check_loads(path, p.npu_path);
    load_npu_plugin(p, "--plugin");
#endif
    flags[p.plugin->stamp.op] = "--plugin " + gate::shell_word(path);
  }
  return flags;
}

}  // namespace npukit::cli
