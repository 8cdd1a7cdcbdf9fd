// Validation of user input against an OpSpec, done once for every entry point.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "runtime/op_spec.h"

namespace npukit {

struct OutputInfo {
  DType dtype;
  std::vector<int64_t> shape;
  bool in_place = false;  // an inout tensor: the caller's input is updated, nothing to allocate
};

// Checks the inputs (presence, null data, rank, dtype, contiguity, consistent named
// dimensions, parameters) and returns the dtype and shape each output must have, and
// each inout tensor (in_place) as the caller passed it.
std::map<std::string, OutputInfo> infer_outputs(const OpSpec& op,
                                                const TensorMap& inputs,
                                                const std::map<std::string, std::string>& params);

// Full validation, outputs included (shape, dtype, no overlap with inputs); splits a
// target such as "cpu:avx2" into family and tier and checks the op has that target.
Call bind_call(const OpSpec& op, const std::string& target,
               const TensorMap& tensors,
               const std::map<std::string, std::string>& params);

// The target part of bind_call: call.target, tier and arch from "cpu:avx2",
// "npu-sim:edge-6tops", ...; an error when the op has no kernel for it.
void bind_target(const OpSpec& op, const std::string& target, Call& call);

// One tensor against its spec alone (null data, dtype, rank, contiguity, dimension ranges),
// with bind_call's messages: a prepared op's constant, checked once.
void check_tensor(const OpSpec& op, const TensorSpec& spec, const TensorView& t);

// Runs the op's kernel for call.target.
void run_call(const Call& call);

}  // namespace npukit
