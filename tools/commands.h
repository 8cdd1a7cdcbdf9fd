// The `npukit` subcommands. Each registers its options on the CLI11 app and, when parsed,
// runs and stores the process exit code: 0 success, 1 a gate failure (or, for sim, a rule
// violation of severity error), 2 a usage or
// configuration error, 3 a harness crash or guard-region corruption. Errors are thrown
// as npukit::Error and turned into a one-line message by main().
#pragma once

#include <CLI/CLI.hpp>

namespace npukit::cli {

void add_gate(CLI::App& app, int& exit_code);
void add_run(CLI::App& app, int& exit_code);
void add_list(CLI::App& app, int& exit_code);
void add_sim(CLI::App& app, int& exit_code);
void add_tune(CLI::App& app, int& exit_code);
void add_decode(CLI::App& app, int& exit_code);
void add_quantize(CLI::App& app, int& exit_code);
void add_calibrate(CLI::App& app, int& exit_code);
void add_quant_report(CLI::App& app, int& exit_code);
void add_new_op(CLI::App& app, int& exit_code);

}  // namespace npukit::cli
