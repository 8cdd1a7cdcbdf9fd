// What each NPU schedule registers, once, beside its code (schedules/npu/<op>.cpp): how to
// build its pipeline per variant, the shapes and knobs it takes, how it picks its knobs for
// a shape, and what its npu-sim kernel needs beyond the call's own tensors and parameters.
// The simulator (simulator/analysis/op_simulation), the npu-sim kernels and every tool read
// only this, so they name no op. An operator's schedules/npu/<op>.cpp is found by name
// (npukit_operator in runtime/operators.cmake), compiled into npukit_npu_sim, and its
// `npu_schedule_<op>()` listed by simulator/CMakeLists.txt (schedules/npu/npu_schedule_list.cpp).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "runtime/op_spec.h"
#include "schedules/npu/npu_pipeline.h"
#include "simulator/arch/arch_spec.h"

namespace npukit::schedules::npu {

using Shape = std::map<std::string, int64_t>;  // named dims → extents
using Knobs = std::map<std::string, int64_t>;  // schedule knob → value

// A schedule knob: a tile extent, a split count, a placement choice. Every schedule also
// has `double_buffer` (0 or 1), which needs no declaration.
struct Knob {
  std::string name;
  int64_t min = 1, max = 2147483647;
  // The shape dim whose loop this knob tiles: the analysis walks every tile, so it refuses
  // up front a shape whose tile count (Π ceil(dim / knob)) would take minutes.
  std::string tiles;
  // Values must be multiples of this (attention's block: the softmax's vectors of
  // positions must tile it). The tuner tries only those; an override of another is refused.
  int64_t multiple_of = 1;
};

// Inputs and scalars an npu-sim run needs that are not the call's own: derived tensors
// (int8_gemm's per-channel factors), values computed from parameters. Owns its storage.
struct ExtraInputs {
  std::map<std::string, std::vector<uint8_t>> storage;
  TensorMap tensors;  // by ImageParam name
  std::map<std::string, int64_t> ints;        // by Param name
  std::map<std::string, double> floats;
  // A tensor backed by `storage`: `count` elements of `dtype` (shape [count]).
  void* add_tensor(const std::string& name, DType dtype, std::vector<int64_t> shape);
};

struct NpuSchedule;

// A view of one of a composite schedule's tensors (an op tensor or an intermediate) that a
// stage reads or writes: `shape` (outermost first) and `strides` in elements from element
// `offset` (empty strides: dense). The KV cache rows pos ... pos+T−1, one projection's
// rows inside the QKV rows.
struct NpuView {
  std::string of;  // the op tensor or intermediate
  int64_t offset = 0;
  std::vector<int64_t> shape, strides;
};

// A DRAM tensor between two stages of a composite schedule: what a fused pipeline could
// keep on chip instead.
struct NpuIntermediate {
  std::string name;
  DType dtype = DType::float32;
  std::vector<int64_t> shape;  // outermost first
  // Set for values no stage makes (the positions pos + t, which the core's scalar unit
  // computes): the npu-sim run fills them from the call; they have no DRAM traffic.
  std::function<void(const Call& call, void* data)> fill;
};

// One stage of a composite schedule: an op with its own NPU schedule (`op`), or a
// pipeline that is no registry op (`schedule`: a float linear, a cache write), run for its
// own shape, dtype and parameters and analysed, checked and costed as it would be alone.
struct NpuStage {
  std::string label;                          // "qkv projection", "rope q"
  std::string op;                             // a registered op, or "" with `schedule`
  const NpuSchedule* schedule = nullptr;      // a stage-only schedule (NpuSchedule::stage_only)
  std::string dtype;                          // the stage's operand dtype
  Shape shape;                                // its named dims
  std::map<std::string, std::string> params;  // its op parameters, as text
  std::map<std::string, NpuView> tensors;     // its tensors (by its own names) → the composite's
};

struct NpuStages {
  std::vector<NpuStage> stages;               // in execution order
  std::vector<NpuIntermediate> intermediates;  // the tensors between them
};

struct NpuSchedule {
  std::string op;                   // the OpSpec's name
  std::vector<std::string> shape;   // the dims `npukit sim --shape` takes
  std::vector<std::string> dtypes;  // operand dtypes with a schedule, the default first
  Shape decode, prefill;            // default shapes: `npukit sim`, `sim --all`, the tuner's docs
  std::vector<Knob> knobs;          // besides double_buffer

  // The variant (one compiled pipeline) for an operand dtype, the op's resolved parameters
  // (and sim_params) and the shape (decode and prefill may be different pipelines): a short
  // name, e.g. "float16" or "int8_fixed_point". Throws std::invalid_argument naming the
  // parameter when the schedule cannot run it.
  std::function<std::string(const std::string& dtype, const Params& params, const Shape& shape)> variant;
  // The variant's pipeline for `arch`. Its inputs and outputs are named as the op's
  // tensors (NpuPipeline::add_input / add_output); its int params as knobs, op parameters
  // or ExtraInputs::ints. `fixed`: double_buffer (fixed_knobs).
  std::function<NpuPipeline(const sim::ArchSpec& arch, const std::string& variant, const Knobs& fixed)> build;
  // The knobs for a shape, double_buffer included: what `npukit sim` and the npu-sim
  // kernel use unless told otherwise. Footprints through sim::fits_buffers /
  // sim::buffer_footprint (simulator/rules/footprint.h), what the capacity rule counts with.
  std::function<Knobs(const sim::ArchSpec& arch, const std::string& variant, const Shape& shape)> choose;

  // Optional. Parameters of the analysis beyond the op's, for what a call shows by its
  // tensors rather than its parameters (attention's `masked`: whether it has a mask):
  // `npukit sim --param` takes them beside the op's; `call_params` gives a call's.
  std::vector<ParamSpec> sim_params;
  std::function<std::map<std::string, std::string>(const Call& call)> call_params;
  // Optional. The shape of a validated call; default: the call's named dims that `shape` lists.
  std::function<Shape(const Call& call)> call_shape;
  // Optional. The operand dtype of a call (what `variant` takes); default: the dtype of the
  // op's first input tensor.
  std::function<std::string(const Call& call)> call_dtype;
  // Optional. What the npu-sim run needs beyond the call's tensors and parameters.
  std::function<void(const Call& call, ExtraInputs& extra)> prepare;
  // Optional. Extents (innermost first) of pipeline buffers that are not op tensors, for
  // the analysis of a shape (e.g. int8_gemm's channel factors: {N}).
  std::function<std::map<std::string, std::vector<int64_t>>(const Shape& shape)> extra_extents;
  // Optional. Values of int params that the analysis of a shape binds and that are no knob,
  // shape dim or op parameter (attention's position: the cache's last); a call's come from
  // `prepare` (ExtraInputs::ints).
  std::function<std::map<std::string, int64_t>(const Shape& shape)> analysis_ints;

  // Composite schedules (an op that is a sequence of stages) set `stages` and none of
  // knobs, variant, build and choose: the op runs, and is analysed, as its stages in order,
  // with the intermediates in DRAM (simulator/analysis/stage_simulation.h). A call's shape,
  // dtype and parameters give the stages; `call_shape`/`call_dtype` as above.
  std::function<NpuStages(const std::string& dtype, const Shape& shape, const Params& params)> stages;
  // A pipeline that only serves as a stage (no OpSpec of its name): it takes no op
  // parameters (its variant is its dtype), `extra_extents` gives every buffer's extents,
  // and it is not in npu_schedules().
  bool stage_only = false;
  std::vector<ParamSpec> params;  // stage_only: its parameters (an op's come from its OpSpec)
};

// The knobs among `knobs` that `build` takes: double_buffer (every other knob is an int
// param of the one lowering per variant and double-buffering choice).
Knobs fixed_knobs(const Knobs& knobs);

// Every registered NPU schedule: the kit's by op name, then operator plug-ins' in load
// order. A deque: references to its elements stay valid while plug-ins add theirs.
const std::deque<NpuSchedule>& npu_schedules();
// The schedule of `op`, or nullptr.
const NpuSchedule* find_npu_schedule(const std::string& op);
// Adds the schedule of an op registered at run time (an operator plug-in's NPU companion,
// schedules/npu/npu_plugin.h). An op that has one already is Errc::invalid_argument. Not
// concurrently with the lookups above.
const NpuSchedule& register_npu_schedule(const NpuSchedule& schedule);

}  // namespace npukit::schedules::npu
