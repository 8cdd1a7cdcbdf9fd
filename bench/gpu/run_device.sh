#!/usr/bin/env bash
# The GPU check on a machine with an NVIDIA GPU and its driver, without Halide or network:
# gates every op on gpu-cuda with npukit-device (the kit's tool without the simulator, so
# no libHalide/libLLVM), then benchmarks every op at decode and prefill shapes against the
# device-to-device copy bandwidth of the same run, and int8 GEMM against cuBLASLt (gpu_bench;
# it loads libcublasLt from the machine's CUDA toolkit, CUDA_HOME or /usr/local/cuda). One
# JSON summary goes to $OUT/gpu_summary.json (or a fresh temporary folder when OUT is unset).
#
# usage: run_device.sh [--dry-run] [BIN_DIR]
#   BIN_DIR holds npukit-device and gpu_bench (default: the build tree, or this folder
#   when they were packed beside it with bench/gpu/pack.sh, shared libraries in lib/).
#   --dry-run: everything but the GPU: the tools start, list the GPU targets, and the bench
#   builds and validates every case on the host (CI runs this, tests/CMakeLists.txt).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dry=0
if [ "${1:-}" = "--dry-run" ]; then dry=1; shift; fi
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x "$here/npukit-device" ]; then bin=$here; else bin=$here/../../build; fi
fi
# Where a pack (BIN_DIR itself) or a build tree (tools/, bench/) puts them; not a search,
# which found a stale packed copy inside the build tree first.
first_of() { for f in "$@"; do if [ -f "$f" ] && [ -x "$f" ]; then echo "$f"; return; fi; done; }
tool=$(first_of "$bin/npukit-device" "$bin/tools/npukit-device")
bench=$(first_of "$bin/gpu_bench" "$bin/bench/gpu_bench")
if [ -z "$tool" ] || [ -z "$bench" ]; then
  echo "run_device: npukit-device or gpu_bench not found under $bin (build them, or pack them with bench/gpu/pack.sh)" >&2
  exit 2
fi
if [ -d "$bin/lib" ]; then export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
# gpu_bench loads cuBLASLt (its int8 anchor) from the machine's CUDA toolkit: too big to travel.
cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
if [ -d "$cuda_lib" ]; then export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$cuda_lib"; fi
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
start=$(date +%s)

"$tool" list > "$out/targets.txt"
grep -q gpu-cuda "$out/targets.txt" || { echo "run_device: $tool lists no gpu-cuda target" >&2; exit 1; }

gate_rc=0
if [ "$dry" = 1 ]; then
  echo '{"skipped": "dry run: no GPU"}' > "$out/gate.json"
else
  "$tool" gate --target gpu-cuda --json "$out/gate.json" > "$out/gate.txt" || gate_rc=$?
  tail -n 5 "$out/gate.txt"
fi

bench_rc=0
bench_args=(--json "$out/bench.json")
if [ "$dry" = 1 ]; then bench_args+=(--dry-run); fi
"$bench" "${bench_args[@]}" > "$out/bench.txt" || bench_rc=$?
cat "$out/bench.txt"

{
  printf '{"date": "%s", "dry_run": %s, "seconds": %s, "gate_exit": %s, "bench_exit": %s,\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$([ "$dry" = 1 ] && echo true || echo false)" \
    "$(($(date +%s) - start))" "$gate_rc" "$bench_rc"
  printf '"gate": '; cat "$out/gate.json"; printf ',\n"bench": '; cat "$out/bench.json"; printf '}\n'
} > "$out/gpu_summary.json"
echo "run_device: summary in $out/gpu_summary.json"
[ "$gate_rc" = 0 ] && [ "$bench_rc" = 0 ]
