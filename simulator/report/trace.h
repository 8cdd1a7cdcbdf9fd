// The per-unit timeline as a Chrome trace-event file, which chrome://tracing and Perfetto
// (ui.perfetto.dev) open: one track per unit of the busiest core, one complete ("X")
// event per interval, times in microseconds.
#pragma once

#include <string>

#include "simulator/simulate.h"

namespace npukit::sim {

std::string trace_json(const SimResult& result);
// Throws std::runtime_error naming `path` when it cannot be written.
void write_trace(const SimResult& result, const std::string& path);

}  // namespace npukit::sim
