#include "simulator/cost/transfer_model.h"

#include <algorithm>
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

int64_t run_base_alignment(const Transfer& t) {
  if (transfer_runs(t) == 1 || t.stride_bytes <= 0) return std::max<int64_t>(1, t.base_alignment);
  int64_t p = 1;  // the largest power of two dividing the stride, capped like base_alignment
  while (p < 4096 && t.stride_bytes % (2 * p) == 0) p *= 2;
  return std::max<int64_t>(1, std::min(t.base_alignment, p));
}

bool masked_store(const Transfer& t, const DmaEngine& engine) {
  if (t.direction != Direction::out || !engine.partial_writes) return false;
  return run_base_alignment(t) < engine.alignment || transfer_run_bytes(t) % engine.alignment != 0;
}

int64_t run_bytes_written(const Transfer& t, const DmaEngine& engine) {
  const int64_t run = transfer_run_bytes(t);
  if (!masked_store(t, engine)) return run;
  const int64_t a = engine.alignment;
  // Starts are multiples of the base alignment: the worst offset into a unit is a - base.
  const int64_t worst_offset = a - std::min(a, run_base_alignment(t));
  return (worst_offset + run + a - 1) / a * a;
}

int64_t burst_bytes_moved(const Transfer& t, const DmaEngine& engine) {
  const int64_t run = run_bytes_written(t, engine);
  const int64_t burst = engine.burst_bytes > 0 ? engine.burst_bytes : 1;
  return transfer_runs(t) * ((run + burst - 1) / burst) * burst;
}

}  // namespace npukit::sim
