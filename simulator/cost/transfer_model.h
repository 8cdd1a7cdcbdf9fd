// How one DRAM <-> buffer transfer meets a DMA engine: which engine carries it and how
// many bytes it really moves once split into contiguous runs and rounded up to bursts.
// The rules (alignment, burst waste) and the cost model (DMA cycles) must agree on this,
// so it lives in one place.
#pragma once

#include <cstdint>

#include "simulator/analysis/op_analysis.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::sim {

// The spec lists engines without a direction, so the convention is positional: the first
// engine loads (DRAM -> buffer), the second, if any, stores; one engine does both.
// Throws std::invalid_argument when the spec has no DMA engine.
const DmaEngine& dma_engine_for(const ArchSpec& arch, Direction direction);

// A transfer whose rows lie back to back in DRAM (rows = 1, or stride = row bytes) is one
// contiguous run; otherwise each row is its own run and pays its own partial burst.
int64_t transfer_runs(const Transfer& t);
int64_t transfer_run_bytes(const Transfer& t);

// Bytes the engine moves for one transfer: every run rounded up to whole bursts.
int64_t burst_bytes_moved(const Transfer& t, const DmaEngine& engine);

}  // namespace npukit::sim
