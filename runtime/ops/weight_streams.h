// Whether a one-token projection with fp16 weights (the qkv_attention kernels' `row_streams`
// argument; schedules/cpu/qkv_attention.cpp) reads its blocks' weight rows together, in
// several streams, instead of one row after the other.
#pragma once

#include "runtime/cpu_features.h"

namespace npukit {

// One stream per task reached 0.96–1.03 of read bandwidth on AMD Zen 4 (qkv_attention
// decode, one thread); on the Intel Xeon with AMX it reached 0.73–0.77, and four rows'
// streams at once 0.89–0.96 on one and two threads (session 37). Only that class was
// measured with both, so only it takes the streams.
inline bool one_token_row_streams(const CpuFeatures& f) { return intel_amx_class(f); }

}  // namespace npukit
