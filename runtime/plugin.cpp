#include "runtime/plugin.h"

#include <dlfcn.h>

#include <deque>
#include <mutex>

#include "runtime/error.h"
#include "runtime/halide_threads.h"
#include "runtime/registry.h"

namespace npukit {
namespace {

std::mutex plugins_mutex;

// Never shrinks and never moves an element: load_operator_plugin returns references.
std::deque<LoadedPlugin>& plugins() {
  static std::deque<LoadedPlugin> p;
  return p;
}

// A bare file name would make dlopen search the library path instead of opening the file.
std::string file_argument(const std::string& path) { return path.find('/') == std::string::npos ? "./" + path : path; }

std::string beside(const std::string& path, const char* file) {
  if (file == nullptr) return "";
  const size_t slash = path.rfind('/');
  return (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + file;
}

}  // namespace

void* open_plugin_symbol(const std::string& path, const char* symbol, std::string_view what, std::string_view kind) {
  if (path.empty()) fail(Errc::invalid_argument, "{} '': expected the path of {}", what, kind);
  // Never closed: the op's code stays registered for the life of the process.
  void* lib = dlopen(file_argument(path).c_str(), RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* why = dlerror();
    fail(Errc::invalid_argument, "{} {}: cannot be loaded ({})", what, path, why ? why : "dlopen failed");
  }
  void* sym = dlsym(lib, symbol);
  if (sym == nullptr)
    fail(Errc::invalid_argument, "{} {}: not {}: it has no symbol {} (npukit_add_operator builds one)", what, path,
         kind, symbol);
  return sym;
}

void check_plugin_stamp(const PluginStamp& stamp, uint64_t layout, const std::string& path, std::string_view what) {
  const std::string version = stamp.kit_version ? stamp.kit_version : "?";
  if (stamp.abi != kOperatorPluginAbi || version != NPUKIT_KIT_VERSION)
    fail(Errc::invalid_argument,
         "{} {}: built against npukit {} (plug-in ABI {}), but this is npukit {} (plug-in ABI {}): a plug-in must be "
         "rebuilt against the kit that loads it",
         what, path, version, stamp.abi, NPUKIT_KIT_VERSION, kOperatorPluginAbi);
  if (stamp.layout != layout)
    fail(Errc::invalid_argument,
         "{} {}: its structures differ from this kit's (layout key {:x}, expected {:x}): rebuild it against this kit's "
         "headers with the same compiler and standard library",
         what, path, stamp.layout, layout);
  if (stamp.op == nullptr || *stamp.op == '\0') fail(Errc::invalid_argument, "{} {}: names no op", what, path);
}

void check_companion_op(const PluginStamp& stamp, const LoadedPlugin& plugin, const std::string& path,
                        std::string_view where) {
  if (std::string_view(stamp.op) != plugin.plugin->stamp.op)
    fail(Errc::invalid_argument, "{} {}: is for op '{}', not '{}'", where, path, stamp.op, plugin.plugin->stamp.op);
}

const LoadedPlugin& load_operator_plugin(const std::string& path, std::string_view what) {
  std::lock_guard<std::mutex> lock(plugins_mutex);
  using Entry = const OperatorPlugin* (*)();
  const auto entry = reinterpret_cast<Entry>(
      open_plugin_symbol(path, "npukit_operator_plugin", what, "an npukit operator plug-in"));
  const OperatorPlugin* p = entry();
  check_plugin_stamp(p->stamp, runtime_layout_key(), path, what);
  for (const LoadedPlugin& l : plugins()) {
    if (l.plugin == p) return l;  // the same file again
    if (std::string_view(l.plugin->stamp.op) == p->stamp.op)
      fail(Errc::invalid_argument, "{} {}: op '{}' is already registered by plug-in {}: op names must be unique", what,
           path, p->stamp.op, l.path);
  }
  const OpSpec& spec = p->spec();
  if (spec.name != p->stamp.op)
    fail(Errc::invalid_argument, "{} {}: its entry describes op '{}', not '{}'", what, path, spec.name, p->stamp.op);
  for (const OpSpec* op : all_ops()) {
    if (op->name == spec.name)
      fail(Errc::invalid_argument, "{} {}: op '{}' is already registered (a built-in op): op names must be unique",
           what, path, spec.name);
  }
  register_op(spec);
  LoadedPlugin loaded;
  loaded.path = path;
  loaded.plugin = p;
  loaded.gate_path = beside(path, p->gate_library);
  loaded.npu_path = beside(path, p->npu_library);
  plugins().push_back(std::move(loaded));
  return plugins().back();
}

std::vector<LoadedPlugin> loaded_plugins() {
  std::lock_guard<std::mutex> lock(plugins_mutex);
  return {plugins().begin(), plugins().end()};
}

int set_halide_threads(int n) {
  std::lock_guard<std::mutex> lock(plugins_mutex);
  for (const LoadedPlugin& l : plugins()) l.plugin->set_num_threads(n);
  note_halide_threads(n);
  return halide_set_num_threads(n);
}

}  // namespace npukit
