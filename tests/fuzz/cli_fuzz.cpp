// libFuzzer target: the command line's argument parsing. The input is argv, its words
// separated by NUL bytes; it is parsed by the subcommands of `npukit-device` (gate, run,
// list: tools/commands.h) as main() sets them up; before any subcommand acts, the target
// stops it and applies what the subcommand parses before it touches a file or a kernel:
// the NAME=VALUE lists (tools/cli_args.h) and, for a known op, its parameters
// (runtime/params.h). A fuzzer must not run what it parses: `--out y=/any/path` would
// write there. Errors are npukit::Error or CLI11's; anything else is a finding.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/error.h"
#include "runtime/params.h"
#include "runtime/registry.h"
#include "tests/fuzz/fuzz_check.h"
#include "tools/cli_args.h"
#include "tools/commands.h"

namespace {

using namespace npukit;

std::vector<std::string> results(const CLI::App& sub, const char* name) {
  for (const CLI::Option* opt : sub.get_options()) {
    if (opt->check_lname(name + 2)) return opt->results();
  }
  return {};
}

// What the subcommand would parse before acting on it.
void parse_arguments(const CLI::App& sub) {
  const std::vector<std::string> ops = results(sub, "--op");
  const auto params = cli::assignment_map(results(sub, "--param"), "--param");
  (void)cli::assignment_map(results(sub, "--in"), "--in");
  (void)cli::assignment_map(results(sub, "--out"), "--out");
  for (const std::string& s : results(sub, "--schedule")) {
    if (s.empty() || s[0] != '@') (void)cli::integer_assignments(s, "--schedule");  // @FILE reads a file
  }
  if (sub.get_name() == "run" && ops.size() == 1) {
    const OpSpec& op = find_op(ops.front());
    (void)resolve_params(op.name, op.params, params);
  }
}

// Thrown once the command line is parsed, to stop before any subcommand acts. (At namespace
// scope: an empty struct inside the extern "C" function draws -Wextern-c-compat.)
struct Parsed {};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> words{"npukit-device"};
  std::string word;
  for (size_t i = 0; i < size && words.size() < 64; ++i) {
    if (data[i] == 0) {
      words.push_back(word);
      word.clear();
    } else {
      word += static_cast<char>(data[i]);
    }
  }
  if (!word.empty()) words.push_back(word);
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());

  CLI::App app{"npukit"};
  app.require_subcommand(1);
  int exit_code = 0;
  cli::add_gate(app, exit_code);
  cli::add_run(app, exit_code);
  cli::add_list(app, exit_code);
  // The top-level app's parse-complete callback runs after the whole command line has
  // been parsed and before any subcommand's action; stopping there leaves the actions (and
  // the arguments they own) as main() sets them up.
  app.parse_complete_callback([&app] {
    for (const CLI::App* sub : app.get_subcommands()) parse_arguments(*sub);
    throw Parsed{};
  });
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const Parsed&) {
  } catch (const CLI::Error&) {
  } catch (const Error&) {  // main() prints it through one_line (runtime/text.h)
  }
  NPUKIT_FUZZ_CHECK(exit_code == 0);  // no subcommand ran
  return 0;
}
