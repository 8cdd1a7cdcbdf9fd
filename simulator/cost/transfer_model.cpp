#include "simulator/cost/transfer_model.h"

#include <stdexcept>

namespace npukit::sim {

const DmaEngine& dma_engine_for(const ArchSpec& arch, Direction direction) {
  if (arch.dma.empty()) throw std::invalid_argument("arch " + arch.name + ": no DMA engine to carry transfers");
  // Engines that say their direction: the first that carries this one. Otherwise the
  // first engine loads and the second (if any) stores.
  const DmaDirection want = direction == Direction::in ? DmaDirection::in : DmaDirection::out;
  for (const DmaEngine& e : arch.dma)
    if (e.direction_given && (e.direction == want || e.direction == DmaDirection::both)) return e;
  for (const DmaEngine& e : arch.dma)
    if (e.direction_given) throw std::invalid_argument("arch " + arch.name + ": no DMA engine carries " +
                                                       (direction == Direction::in ? "loads (direction in or both)" : "stores (direction out or both)"));
  if (direction == Direction::out && arch.dma.size() > 1) return arch.dma[1];
  return arch.dma[0];
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
