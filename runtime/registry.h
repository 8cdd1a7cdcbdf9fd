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

// Every shipped operator, in a stable order.
const std::vector<const OpSpec*>& all_ops();

// The op called `name`; an unknown name is an error listing the known ones.
const OpSpec& find_op(const std::string& name);

// Every target the kit knows, for listings: "cpu", then "cpu:<tier>" for each CPU tier.
std::vector<std::string> all_targets();

}  // namespace npukit
