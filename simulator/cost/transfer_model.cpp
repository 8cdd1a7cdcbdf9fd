#include "simulator/cost/transfer_model.h"

#include <stdexcept>

namespace npukit::sim {

const DmaEngine& dma_engine_for(const ArchSpec& arch, Direction direction) {
  return arch.dma_for(direction == Direction::in ? DmaDirection::in : DmaDirection::out);
}

int64_t transfer_runs(const Transfer& t) {
  const bool contiguous = t.rows <= 1 || t.stride_bytes == t.row_bytes;
  return contiguous ? 1 : t.rows;
}

int64_t transfer_run_bytes(const Transfer& t) {
  return transfer_runs(t) == 1 ? t.bytes() : t.row_bytes;
}

int64_t burst_bytes_moved(const Transfer& t, const DmaEngine& engine) {
  const int64_t run = transfer_run_bytes(t);
  const int64_t burst = engine.burst_bytes > 0 ? engine.burst_bytes : 1;
  return transfer_runs(t) * ((run + burst - 1) / burst) * burst;
}

}  // namespace npukit::sim
