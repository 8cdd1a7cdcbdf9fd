// The operators with NPU schedules, analysed for one shape on one architecture: builds (or
// takes from the cache) the schedule's pipeline, lowers it once per variant, binds the
// shape and the tile sizes, and reads the nest. Shapes and tiles are parameters of the
// lowered nest, so a sweep over shapes lowers each variant once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "schedules/npu/int8_gemm.h"
#include "schedules/npu/npu_pipeline.h"
#include "simulator/analysis/op_analysis.h"

namespace npukit::sim {

struct SimRequest {
  std::string op;                        // "int8_gemm" or "rms_norm"
  std::map<std::string, int64_t> shape;  // int8_gemm: M, K, N; rms_norm: rows, hidden
  std::string dtype;                     // int8_gemm: int8; rms_norm: float32 | float16
  std::string out = "int32";             // int8_gemm's output stage: int32 | int8 | int8_float | float32 | float16
  // Schedule overrides (the chosen ones otherwise): tile_m, tile_n, tile_k, tile_rows,
  // double_buffer (0 or 1).
  std::map<std::string, int64_t> schedule;
};

// Ops with an NPU schedule, their shape names and dtypes, for listings and errors.
struct SimulatedOp {
  std::string op;
  std::vector<std::string> shape;
  std::vector<std::string> dtypes;
  std::vector<std::string> schedule_keys;
  std::map<std::string, int64_t> default_shape;  // what the main job simulates
};
const std::vector<SimulatedOp>& simulated_ops();

// The analysis, with the schedule knobs used recorded in `OpAnalysis::shape` as well.
// Errors (unknown op, missing or non-positive dims, an unknown schedule key) are
// std::invalid_argument naming the argument, the value and the rule.
OpAnalysis analyse_op(const SimRequest& request, const ArchSpec& arch);

// The lowered nest the analysis read for `request` (Halide's statement syntax), for
// `npukit sim --nest`: what an operator author checks the schedule against.
std::string lowered_nest_text(const SimRequest& request, const ArchSpec& arch);

// A lowered, ready-to-run NPU pipeline for one op variant on one architecture (cached).
struct CompiledNpuOp {
  schedules::npu::NpuPipeline pipeline;
  Halide::Internal::Stmt nest;
};
std::shared_ptr<CompiledNpuOp> compiled_npu_op(const std::string& op, const std::string& variant, const ArchSpec& arch,
                                               bool double_buffer);
// int8_gemm's output stage by its name in SimRequest::out (int32, int8, int8_float,
// float32, float16); std::invalid_argument otherwise.
schedules::npu::GemmOut gemm_out(const std::string& out);

// How many variants were lowered so far (tests check the cache).
int64_t npu_lowerings();

}  // namespace npukit::sim
