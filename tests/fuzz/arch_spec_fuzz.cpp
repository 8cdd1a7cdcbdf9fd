// libFuzzer target: the architecture-spec loader (simulator/arch/arch_spec.cpp) on arbitrary
// YAML, and every spec it accepts through what consumes one: the summary, the peaks, the
// DMA directions and a whole simulation (rules and cost model) of a decode GEMV. A spec
// the loader accepts must keep all of that defined (UBSan traps any signed overflow) and
// finite, or be refused by the cost model with a message: the per-key limits of
// docs/simulator/arch-spec.md exist for that.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "simulator/arch/arch_spec.h"
#include "simulator/simulate.h"
#include "tests/fuzz/fuzz_check.h"
#include "tests/sim_test_fixtures.h"

namespace {

using namespace npukit::sim;

void consume(const ArchSpec& arch) {
  (void)arch_summary(arch);
  for (Dtype d : {Dtype::int8, Dtype::fp16, Dtype::bf16, Dtype::fp32, Dtype::int32}) {
    const double peak = arch.peak_ops_per_second(d);
    NPUKIT_FUZZ_CHECK(std::isfinite(peak) && peak >= 0);
    NPUKIT_FUZZ_CHECK((peak > 0) == arch.matrix.supports(d));
  }
  const double per_core = arch.dram_bytes_per_cycle_per_core();
  NPUKIT_FUZZ_CHECK(std::isfinite(per_core) && per_core > 0);
  (void)arch.dma_for(DmaDirection::in);  // the loader refuses a spec without both directions
  (void)arch.dma_for(DmaDirection::out);
  // The fixture's tensors live in its buffer "buf": put them in this spec's first one.
  OpAnalysis gemv = testing::decode_gemv();
  for (Transfer& t : gemv.transfers) t.buffer = arch.buffers.front().name;
  for (Allocation& a : gemv.allocations) a.buffer = arch.buffers.front().name;
  try {
    const SimResult r = simulate(gemv, arch, /*strict=*/false);
    NPUKIT_FUZZ_CHECK(r.cost.total_cycles >= 0 && std::isfinite(r.cost.time_us));
  } catch (const std::invalid_argument& e) {
    // The cost model refuses a count past 2^62 (clock x latency at their limits): an
    // error with a message, never a wrapped number.
    npukit::fuzz::check_message(e.what(), "");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  ArchSpec arch;
  try {
    arch = parse_arch_spec(text, "fuzz.yaml");
  } catch (const std::runtime_error& e) {
    npukit::fuzz::check_message(e.what(), "fuzz.yaml: ");
    return 0;
  }
  consume(arch);
  return 0;
}
