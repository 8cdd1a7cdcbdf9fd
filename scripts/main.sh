#!/usr/bin/env bash
# The main job on built-in defaults: set up; gate every shipped operator on every CPU
# target, and the operators with NPU schedules on the default NPU preset (npu-sim: the
# NPU schedule run on real data); then simulate those on the preset and print the table
# (cycles, bound, utilization, violations). Exit status: the worst of the three
# (0 all pass; 1 a gate failure or a rule error; 2 a usage error).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2 || exit $?
preset=edge-6tops
status=0
build/tools/npukit gate --target cpu --target cpu:avx2 --target cpu:sse41 "$@" || status=$?
echo
build/tools/npukit gate --op rms_norm --op int8_gemm --target "npu-sim:$preset" || { s=$?; ((s > status)) && status=$s; }
echo
build/tools/npukit sim --arch "$preset" || { s=$?; ((s > status)) && status=$s; }
exit "$status"
