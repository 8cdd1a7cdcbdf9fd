// An operator's NPU schedule analysed for one shape on one architecture: takes the op's
// registration (schedules/npu/npu_schedule.h), builds (or takes from the cache) the
// pipeline of the variant its dtype and parameters pick, lowers it once per variant, binds
// the shape and the schedule's knobs, and reads the nest. Shapes and knobs are parameters
// of the lowered nest, so a sweep over shapes or knobs lowers each variant once. Names no op.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schedules/npu/npu_pipeline.h"
#include "schedules/npu/npu_schedule.h"
#include "simulator/analysis/lowered_nest.h"
#include "simulator/analysis/op_analysis.h"

namespace npukit::sim {

struct SimRequest {
  std::string op;
  std::map<std::string, int64_t> shape;       // the schedule's named dims; empty = its decode shape
  std::string dtype;                          // operand dtype; "" = the schedule's first
  std::map<std::string, std::string> params;  // op parameters as text, as `npukit run --param` takes them
  std::map<std::string, int64_t> schedule;    // knob overrides (the chooser's values otherwise)
};

// Everything a request resolves to before the nest is read: the schedule, its variant, the
// full shape and the knobs (chosen, then overridden).
struct ResolvedRequest {
  const schedules::npu::NpuSchedule* schedule = nullptr;
  std::string dtype, variant;
  schedules::npu::Shape shape;
  schedules::npu::Knobs knobs;  // double_buffer included
  Params params;
};
// Validates the request: errors (unknown op, dim, knob or parameter, a value out of range,
// too many tiles; a composite schedule, which is analysed as its stages) are
// std::invalid_argument naming the argument, the value and the rule.
ResolvedRequest resolve_request(const SimRequest& request, const ArchSpec& arch);

// A composite schedule's request (NpuSchedule::stages): shape, dtype and parameters
// checked as above; no variant or knobs (its stages have their own).
ResolvedRequest resolve_composite(const SimRequest& request, const ArchSpec& arch);
// One stage of a composite: its registered op's schedule, or its stage-only schedule,
// resolved for the stage's shape, dtype and parameters.
ResolvedRequest resolve_stage(const schedules::npu::NpuStage& stage, const ArchSpec& arch);

// A knob override: std::invalid_argument for an unknown key, or a value outside the knob's
// range or not a multiple of its multiple_of (double_buffer: 0 or 1).
void check_knob(const schedules::npu::NpuSchedule& s, const std::string& name, int64_t value);

// The analysis, with the knobs used recorded in `OpAnalysis::schedule`.
OpAnalysis analyse_op(const SimRequest& request, const ArchSpec& arch);
// The same for a resolved request with other knobs (the tuner's candidates): no lowering
// once the variant is cached. Knob values are checked against their declared ranges.
// `walk`: lowered_nest.h's (tests compare the two).
OpAnalysis analyse_resolved(const ResolvedRequest& r, const schedules::npu::Knobs& knobs, const ArchSpec& arch,
                            Walk walk = Walk::merged);

// The lowered nest the analysis reads for `request` (Halide's statement syntax), for
// `npukit sim --nest`: what an operator author checks the schedule against, also when the
// analysis cannot read it.
std::string lowered_nest_text(const SimRequest& request, const ArchSpec& arch);

// A lowered, ready-to-run NPU pipeline for one op variant on one architecture (cached).
struct CompiledNpuOp {
  schedules::npu::NpuPipeline pipeline;
  Halide::Internal::Stmt nest;
};
// `fixed`: the knobs the pipeline's code depends on (schedules::npu::fixed_knobs).
std::shared_ptr<CompiledNpuOp> compiled_npu_op(const schedules::npu::NpuSchedule& schedule, const std::string& variant,
                                               const ArchSpec& arch, const schedules::npu::Knobs& fixed);

// The same variant's pipeline for npu-sim runs alone (cached apart): a run JIT-compiles it
// and reads no nest, and the analysis's lowering would be a fifth of its time. Apart from
// compiled_npu_op's, because capturing a nest resets a pipeline's JIT-compiled code.
std::shared_ptr<schedules::npu::NpuPipeline> runnable_npu_op(const schedules::npu::NpuSchedule& schedule,
                                                             const std::string& variant, const ArchSpec& arch,
                                                             const schedules::npu::Knobs& fixed);

// How many variants were lowered so far (tests check the cache).
int64_t npu_lowerings();

}  // namespace npukit::sim
