// All operators the kit ships, and lookups over them.
#pragma once

#include <string>
#include <vector>

#include "runtime/op_spec.h"

namespace npukit {

// Every shipped operator, in the order runtime/operators.cmake declares them, then the ops
// of loaded operator plug-ins in load order. Each runtime/ops/<op>.cpp defines
// `const OpSpec& <op>_spec()`, which registry.cpp lists from the generated
// npukit/operator_list.h: adding an op edits neither this file nor that one.
const std::vector<const OpSpec*>& all_ops();

// Adds an op at run time (an operator plug-in's, runtime/plugin.h); registering the same
// OpSpec again does nothing. Another op of the same name is Errc::invalid_argument. Not
// concurrently with anything that reads the registry: a process registers its plug-ins
// before it runs ops.
void register_op(const OpSpec& op);

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

// The CPU tier a plain "cpu" call of `op` dispatches to here: the first of op.cpu_tiers
// that this CPU runs, or with a `forced` tier (which this CPU runs) the first at or below it,
// as its kernels pick (tier_dispatchable, runtime/cpu_variant.h); nullptr when there is none
// or the op has no CPU kernel.
const std::string* dispatched_cpu_tier(const OpSpec& op, std::string_view forced = {});

}  // namespace npukit
