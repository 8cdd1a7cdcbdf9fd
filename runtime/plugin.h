// Loading operator plug-ins (runtime/operator_plugin.h) into this process: the C ABI's
// npukit_load_plugin and the tools' --plugin. The op joins the registry (register_op) and
// from then on is found, validated and run like a built-in one. The gate's and the NPU
// simulator's halves of a plug-in are loaded by their own libraries
// (tools/gate/gate_plugin.h, schedules/npu/npu_plugin.h) through the helpers below.
#pragma once

#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/operator_plugin.h"

namespace npukit {

struct LoadedPlugin {
  std::string path;  // as the caller gave it
  const OperatorPlugin* plugin = nullptr;
  // The companions' paths (in the plug-in's directory), empty where it has none.
  std::string gate_path, npu_path;
};

// Loads the operator plug-in at `path` and registers its op. `what` names the argument in
// errors ("--plugin", "npukit_load_plugin"): each is Errc::invalid_argument, one line
// naming `what`, the path and the rule (cannot be loaded; not an operator plug-in; built
// against another kit; an op name already taken). Loading the same file again returns the
// first load. Not concurrently with anything that reads the registry.
const LoadedPlugin& load_operator_plugin(const std::string& path, std::string_view what);

// Every plug-in loaded so far, in load order.
std::vector<LoadedPlugin> loaded_plugins();

// halide_set_num_threads for the kit's Halide runtime and each loaded plug-in's (each has
// its own). Returns the kit's previous value.
int set_halide_threads(int n);

// For the companions' loaders: opens `path` (RTLD_LOCAL: every plug-in exports the same
// symbol names) and returns `symbol`'s address, or throws as load_operator_plugin does;
// `kind` says what the file should have been ("an operator plug-in's gate companion").
void* open_plugin_symbol(const std::string& path, const char* symbol, std::string_view what, std::string_view kind);
// Refuses a descriptor built against another kit: its ABI, kit version or layout key
// differs from this kit's (`layout`).
void check_plugin_stamp(const PluginStamp& stamp, uint64_t layout, const std::string& path, std::string_view what);

// Refuses a companion stamped for another op than its plug-in's.
void check_companion_op(const PluginStamp& stamp, const LoadedPlugin& plugin, const std::string& path,
                        std::string_view where);

// The descriptor of a loaded plug-in's companion at `path` (its gate_path or npu_path),
// whose function `symbol` returns a `const Descriptor*` stamped with `layout` for the
// plug-in's op; nullptr when `path` is empty or was loaded before (once per companion).
// `kind` names it in errors ("gate companion").
template <class Descriptor>
const Descriptor* load_companion(const LoadedPlugin& plugin, const std::string& path, const char* symbol,
                                 uint64_t layout, std::string_view kind, std::string_view what) {
  if (path.empty()) return nullptr;
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (!loaded.insert(path).second) return nullptr;
  const std::string where = std::string(what) + " " + plugin.path + ": its " + std::string(kind);
  try {
    using Entry = const Descriptor* (*)();
    const auto entry = reinterpret_cast<Entry>(
        open_plugin_symbol(path, symbol, where, "an operator plug-in's " + std::string(kind)));
    const Descriptor* d = entry();
    check_plugin_stamp(d->stamp, layout, path, where);
    check_companion_op(d->stamp, plugin, path, where);
    return d;
  } catch (...) {
    loaded.erase(path);
    throw;
  }
}

}  // namespace npukit
