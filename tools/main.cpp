// npukit: gate, run, list, simulate and tune the kit's operators.
#include <iostream>

#include "runtime/error.h"
#include "schedules/npu/npu_sim_schedules.h"
#include "simulator/analysis/npu_sim_kernels.h"
#include "tools/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"npukit: write, check and simulate LLM-decode operators"};
  app.require_subcommand(1);
  int exit_code = 0;
  npukit::sim::register_npu_sim_kernels();
  npukit::schedules::npu::register_npu_sim_schedules();
  npukit::cli::add_gate(app, exit_code);
  npukit::cli::add_run(app, exit_code);
  npukit::cli::add_list(app, exit_code);
  npukit::cli::add_sim(app, exit_code);
  npukit::cli::add_tune(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const npukit::Error& e) {
    std::cerr << "npukit: " << e.what() << '\n';
    if (e.code() == npukit::Errc::internal) return 3;
    return e.code() == npukit::Errc::kernel_failed ? 1 : 2;
  } catch (const std::exception& e) {
    std::cerr << "npukit: " << e.what() << '\n';
    return 2;
  }
  return exit_code;
}
