// The simulator's view of an NPU schedule: a custom lowering pass captures the loop nest
// Halide hands to such passes (after bounds inference, storage flattening, vectorization
// and unrolling, before the host closure lowering), and `analyse_nest` reads it for one
// binding of shapes and tile sizes: loops, on-chip allocations, DMA transfers, matrix
// tiles and vector work (docs/simulator/ir-analysis.md).
#pragma once

#include <string>
#include <vector>

#include "Halide.h"
#include "schedules/npu/npu_pipeline.h"
#include "simulator/analysis/int_eval.h"
#include "simulator/analysis/op_analysis.h"

namespace npukit::sim {

// Lowers `p` for `target` (no codegen) and returns the nest its custom pass saw.
Halide::Internal::Stmt capture_lowered_nest(schedules::npu::NpuPipeline& p, const Halide::Target& target);

// Names the nest uses for a dense buffer: "<name>.min.i" = 0, "<name>.extent.i",
// "<name>.stride.i" for dims given innermost first.
void bind_dense_buffer(Bindings& env, const std::string& name, const std::vector<int64_t>& extents);

// How the loops that must be walked iteration by iteration (they hold transfers, tiles or
// bounds that move) are read: `merged` walks one iteration of each group of iterations
// with equal keys (simulator/analysis/iteration_key.h) and counts it for the group;
// `every_iteration` walks all of them, the reference tests hold the merged walk to.
enum class Walk { merged, every_iteration };

// Reads the nest under `env` (every buffer field and parameter it needs). Throws
// std::runtime_error naming the loop or allocation whose size it cannot evaluate.
// `outputs`: the Func names of the pipeline's outputs (NpuPipeline::output_funcs).
OpAnalysis analyse_nest(const Halide::Internal::Stmt& nest, const schedules::npu::NpuPlan& plan,
                        const std::string& op, const std::vector<std::string>& outputs, const Bindings& env,
                        Walk walk = Walk::merged);

}  // namespace npukit::sim
