// All operators the kit ships, and lookups over them.
#pragma once

#include <string>
#include <vector>

#include "runtime/op_spec.h"

namespace npukit {

const OpSpec& rms_norm_spec();
const OpSpec& rope_spec();
const OpSpec& int8_gemm_spec();
const OpSpec& attention_spec();
const OpSpec& qkv_attention_spec();
const OpSpec& per_token_quant_spec();
const OpSpec& silu_mul_spec();
const OpSpec& add_rms_norm_spec();

// Every shipped operator, in a stable order.
const std::vector<const OpSpec*>& all_ops();

// The op called `name`; an unknown name is an error listing the known ones.
const OpSpec& find_op(const std::string& name);

// Every target the kit knows, for listings: "cpu", then "cpu:<tier>" for each CPU tier,
// then the registered ones (e.g. "npu-sim:<preset>").
std::vector<std::string> all_targets();

// Kernels that live outside libnpukit: the npu-sim target JIT-compiles NPU schedules with
// libHalide, which the plug-in library does not link, so the program that has them (the
// npukit tool, tests) registers them at start-up. `targets` are names for listings.
void register_kernel(const std::string& op, const std::string& family, KernelFn fn,
                     const std::vector<std::string>& targets = {});
// The kernel of `op` for a target family (built in or registered), or nullptr.
const KernelFn* find_kernel(const OpSpec& op, const std::string& family);
// The families `op` has a kernel for, built in first.
std::vector<std::string> kernel_families(const OpSpec& op);

}  // namespace npukit
