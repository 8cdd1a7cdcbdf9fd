// npukit: gate, run, list, simulate and tune the kit's operators; plan decode; quantize weights;
// calibrate activations; report a quantized layer's error; start an operator plug-in (new-op).
// Built twice: `npukit` with the simulator (npu-sim kernels, which JIT-compile with libHalide)
// and `npukit-device` without it (NPUKIT_NO_SIMULATOR): gate, run, list and the quantization
// commands over the AOT kernels only, small and free of libHalide/libLLVM, for GPU machines
// that have neither.
#include <iostream>

#include "runtime/error.h"
#include "runtime/text.h"
#include "tools/commands.h"
#ifndef NPUKIT_NO_SIMULATOR
#include "simulator/analysis/npu_sim_kernels.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"npukit: write, check and simulate LLM-decode operators"};
  app.require_subcommand(1);
  int exit_code = 0;
#ifndef NPUKIT_NO_SIMULATOR
  npukit::sim::register_npu_sim_kernels();
#endif
  npukit::cli::add_gate(app, exit_code);
  npukit::cli::add_run(app, exit_code);
  npukit::cli::add_list(app, exit_code);
#ifndef NPUKIT_NO_SIMULATOR
  npukit::cli::add_sim(app, exit_code);
  npukit::cli::add_tune(app, exit_code);
  npukit::cli::add_decode(app, exit_code);
#endif
  npukit::cli::add_quantize(app, exit_code);
  npukit::cli::add_calibrate(app, exit_code);
  npukit::cli::add_quant_report(app, exit_code);
  npukit::cli::add_new_op(app, exit_code);
  // CLI11 answers an unknown first word with "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::string names;
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      names += (names.empty() ? "" : ", ") + sub->get_name();
      known = known || sub->get_name() == argv[1];
    }
    if (!known) {
      std::cerr << npukit::one_line("npukit: unknown subcommand '" + std::string(argv[1]) + "' (subcommands: " + names + ")") << '\n';
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const npukit::Error& e) {
    // Messages echo the arguments: a newline in one must not split the line.
    std::cerr << npukit::one_line(std::string("npukit: ") + e.what()) << '\n';
    if (e.code() == npukit::Errc::internal) return 3;
    return e.code() == npukit::Errc::kernel_failed ? 1 : 2;
  } catch (const std::exception& e) {
    std::cerr << npukit::one_line(std::string("npukit: ") + e.what()) << '\n';
    return 2;
  }
  return exit_code;
}
