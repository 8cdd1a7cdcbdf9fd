#!/usr/bin/env bash
# The main job on built-in defaults: set up; gate every shipped operator on every CPU
# target and on the default NPU preset (npu-sim: each op's NPU schedule run on real data);
# then simulate every NPU schedule on the preset at its decode and prefill shapes and print
# the table (cycles, bound, busiest unit, DRAM bytes, violations); end with one decode plan
# (npukit decode: tokens/s, prefill, memory). Exit status: the worst of the four
# (0 all pass; 1 a gate failure or a rule error; 2 a usage error).
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2 || exit $?
preset=edge-6tops
status=0
build/tools/npukit gate --target cpu --target cpu:avx2 --target cpu:sse41 "$@" || status=$?
echo
build/tools/npukit gate --target "npu-sim:$preset" || { s=$?; ((s > status)) && status=$s; }
echo
build/tools/npukit sim --all --arch "$preset" || { s=$?; ((s > status)) && status=$s; }
echo
# One decode plan on the preset: TinyLlama at fp16 over a 256-position cache, a 16-token prompt.
build/tools/npukit decode --model tinyllama-1.1b --arch "$preset" --context 256 --prompt 16 || { s=$?; ((s > status)) && status=$s; }
exit "$status"
