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

// The largest power of two dividing every run's DRAM start: the base alignment, and for
// strided rows also the stride's.
int64_t run_base_alignment(const Transfer& t);

// A store on an engine with partial writes (DmaEngine::partial_writes) whose run or base is
// off the engine's alignment: the engine writes the aligned units the run touches, the
// bytes outside it masked. True when that is how `t` is written.
bool masked_store(const Transfer& t, const DmaEngine& engine);

// Bytes one run occupies on the engine before burst rounding: the run itself, or for a
// masked store the aligned units it touches, counted at the worst offset its base
// alignment allows (a run of r bytes at offset o touches ceil((o + r) / alignment) units).
int64_t run_bytes_written(const Transfer& t, const DmaEngine& engine);

// Bytes the engine moves for one transfer: every run (as run_bytes_written) rounded up to
// whole bursts.
int64_t burst_bytes_moved(const Transfer& t, const DmaEngine& engine);

}  // namespace npukit::sim
