// `--plugin PATH` of gate, run, list, sim and tune: operator plug-ins (runtime/plugin.h)
// loaded before the subcommand looks at any op, with their gate companion and, in the
// tool that has the simulator, their NPU companion.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace npukit::cli {

void add_plugin_option(CLI::App* sub, std::vector<std::string>& paths);

// Loads each plug-in and its companions. Each file is first loaded in a child process: one
// whose loading crashes is Errc::internal (exit 3) naming it, before this process loads it.
// Returns, by op, the "--plugin PATH" that a repro line needs to know the op.
std::map<std::string, std::string> load_plugins(const std::vector<std::string>& paths);

}  // namespace npukit::cli
