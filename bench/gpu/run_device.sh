#!/usr/bin/env bash
# The GPU check on a machine with an NVIDIA GPU and its driver, without Halide or network:
# gates every op on gpu-cuda with npukit-device (the kit's tool without the simulator, so
# no libHalide/libLLVM), then benchmarks every op with a gpu-cuda kernel at decode and
# prefill shapes against the device-to-device copy bandwidth of the same run, int8 GEMM
# against cuBLASLt, and each row's host-tensor copies (gpu_bench; it loads libcublasLt from
# the machine's CUDA toolkit, CUDA_HOME or /usr/local/cuda: nothing is built there). One
# JSON summary goes to $OUT/gpu_summary.json (or a fresh temporary folder when OUT is unset).
#
# Every step runs under `timeout`, and the whole script within NPUKIT_DEVICE_BUDGET_S
# seconds (default 330, under the 6 minutes the device check may take): the gate gets at
# most NPUKIT_GATE_LIMIT_S (default 150), the bench what is left (it also stops starting
# cases 20 s before its limit, and rewrites its JSON after every row). The summary says
# which step timed out ("timed_out") and each step's exit status, seconds and limit.
#
# usage: run_device.sh [--dry-run] [BIN_DIR]
#   BIN_DIR holds npukit-device and gpu_bench (default: the build tree, or this folder
#   when they were packed beside it with bench/gpu/pack.sh, shared libraries in lib/).
#   --dry-run: everything but the GPU: the tool lists gpu-cuda; the gate runs with the same
#   arguments on the cpu target for one op and class (must pass) and once on gpu-cuda for
#   that op (must run, or stop at "no CUDA device was found"); the bench builds, binds and
#   validates every case (device and host tensors) on the host (CI runs this,
#   bench/CMakeLists.txt, from the build tree and from a pack).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dry=0
if [ "${1:-}" = "--dry-run" ]; then dry=1; shift; fi
bin=${1:-}
if [ -z "$bin" ]; then
  if [ -x "$here/npukit-device" ]; then bin=$here; else bin=$here/../../build; fi
fi
bin=$(cd "$bin" && pwd)
# Where a pack (BIN_DIR itself) or a build tree (tools/, bench/) puts them; not a search,
# which found a stale packed copy inside the build tree first.
first_of() { for f in "$@"; do if [ -f "$f" ] && [ -x "$f" ]; then echo "$f"; return; fi; done; }
tool=$(first_of "$bin/npukit-device" "$bin/tools/npukit-device")
bench=$(first_of "$bin/gpu_bench" "$bin/bench/gpu_bench")
if [ -z "$tool" ] || [ -z "$bench" ]; then
  echo "run_device: npukit-device or gpu_bench not found under $bin (build them, or pack them with bench/gpu/pack.sh)" >&2
  exit 2
fi
command -v timeout > /dev/null || { echo "run_device: needs timeout (coreutils)" >&2; exit 2; }

# glibc cannot travel with a pack: before running anything, refuse in one line a machine
# whose glibc is older than the packed files need (pack.sh writes pack_requires). The
# machine's own libstdc++ is used when it has the GLIBCXX/CXXABI versions the binaries need,
# else the packed one in lib/cxx/ (which needs a newer glibc); NPUKIT_LIBSTDCXX=packed or
# =system forces the choice (CI runs the pack with packed).
vge() { [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -n 1)" = "$2" ]; }  # $1 >= $2
glibc_have=$(getconf GNU_LIBC_VERSION 2> /dev/null | awk '{print $2}' || true)
[ -n "$glibc_have" ] || glibc_have=$(ldd --version 2> /dev/null | head -n 1 | grep -oE '[0-9]+\.[0-9]+$' || true)
glibc_need="" cxx_mode=${NPUKIT_LIBSTDCXX:-auto} use_packed_cxx=0
if [ -f "$bin/pack_requires" ]; then
  req() { sed -n "s/^$1=//p" "$bin/pack_requires"; }
  glibc_need=$(req glibc) glibc_cxx=$(req glibc_cxx) glibcxx=$(req glibcxx) cxxabi=$(req cxxabi)
  if [ -z "$glibc_have" ]; then
    echo "run_device: warning: cannot tell this machine's glibc version; the packed binaries need glibc >= $glibc_need" >&2
    glibc_have=unknown
  elif ! vge "$glibc_have" "$glibc_need"; then
    echo "run_device: this machine has glibc $glibc_have, the packed binaries need glibc >= $glibc_need: pack them on a machine with glibc <= $glibc_have (bench/gpu/pack.sh)" >&2
    exit 3
  fi
  sys_cxx=$( (ldconfig -p || /sbin/ldconfig -p) 2> /dev/null | awk '/libstdc\+\+\.so\.6 \(libc6,x86-64/ {print $NF; exit}' || true)
  for f in /usr/lib/x86_64-linux-gnu/libstdc++.so.6 /usr/lib64/libstdc++.so.6 /lib64/libstdc++.so.6; do
    if [ -z "$sys_cxx" ] && [ -f "$f" ]; then sys_cxx=$f; fi
  done
  sys_cxx_ok=0
  if [ -n "$sys_cxx" ] && grep -qaF "GLIBCXX_$glibcxx" "$sys_cxx" && grep -qaF "CXXABI_$cxxabi" "$sys_cxx"; then sys_cxx_ok=1; fi
  case "$cxx_mode" in
    system) ;;
    packed) use_packed_cxx=1 ;;
    auto) if [ "$sys_cxx_ok" = 0 ]; then use_packed_cxx=1; fi ;;
    *) echo "run_device: NPUKIT_LIBSTDCXX=$cxx_mode: use auto, packed or system" >&2; exit 2 ;;
  esac
  if [ "$use_packed_cxx" = 1 ] && [ "$glibc_have" != unknown ] && ! vge "$glibc_have" "$glibc_cxx"; then
    echo "run_device: this machine's libstdc++ (${sys_cxx:-none found}) lacks GLIBCXX_$glibcxx or CXXABI_$cxxabi and its glibc $glibc_have is older than the packed libstdc++ needs ($glibc_cxx): pack on a machine with an older glibc" >&2
    exit 3
  fi
fi

# lib/ (libfmt) first on the path, and lib/cxx/ (libstdc++, libgcc_s) when chosen above.
if [ -d "$bin/lib" ]; then export LD_LIBRARY_PATH="$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; fi
if [ "$use_packed_cxx" = 1 ]; then export LD_LIBRARY_PATH="$bin/lib/cxx:$LD_LIBRARY_PATH"; fi
cxx_used=$(ldd "$bench" 2> /dev/null | awk '/libstdc\+\+/ {print $3}' || true)
if [ "$use_packed_cxx" = 1 ] && [ "${cxx_used#"$bin/lib/cxx/"}" = "$cxx_used" ]; then
  echo "run_device: the packed libstdc++ was chosen but gpu_bench resolves ${cxx_used:-none}" >&2
  exit 2
fi
# gpu_bench loads cuBLASLt (its int8 anchor) from the machine's CUDA toolkit: too big to travel.
cuda_lib=${CUDA_HOME:-/usr/local/cuda}/lib64
if [ -d "$cuda_lib" ]; then export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$cuda_lib"; fi
out=${OUT:-$(mktemp -d)}
mkdir -p "$out"
rm -f "$out/gate.json" "$out/bench.json" "$out/gate_gpu_cuda.json"
start=$(date +%s)
budget=${NPUKIT_DEVICE_BUDGET_S:-330}
gate_limit=${NPUKIT_GATE_LIMIT_S:-150}
deadline=$((start + budget))
left() { echo $((deadline - $(date +%s))); }

min() { if [ "$1" -lt "$2" ]; then echo "$1"; else echo "$2"; fi; }
# step NAME LIMIT_S CMD...: runs CMD under timeout (SIGTERM at LIMIT_S, or 10 s before the
# budget ends if sooner; SIGKILL 5 s later), stdout and stderr to $out/NAME.txt; records its
# exit status, seconds and limit.
steps_json="" timed_out=() failed=0
step() {
  local name=$1 limit t0 rc=0
  limit=$(min "$2" $(($(left) - 10)))
  shift 2
  t0=$(date +%s)
  if [ "$limit" -lt 1 ]; then
    rc=124
    echo "run_device: $name: not run, no time left of the ${budget} s budget" > "$out/$name.txt"
  else
    timeout -k 5 "$limit" "$@" > "$out/$name.txt" 2>&1 || rc=$?
  fi
  local to=false
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    to=true
    timed_out+=("\"$name\"")
    echo "run_device: $name timed out after $limit s" >&2
  fi
  steps_json+="${steps_json:+, }\"$name\": {\"exit\": $rc, \"seconds\": $(($(date +%s) - t0)), \"limit_s\": $limit, \"timed_out\": $to}"
  return "$rc"
}

step list 30 "$tool" list || failed=1
grep -q gpu-cuda "$out/list.txt" || { echo "run_device: $tool lists no gpu-cuda target" >&2; failed=1; }

# The gate: on the device every op, dtype and input class on gpu-cuda; in the dry run the
# same command on the cpu target for one op and class, then that op on gpu-cuda, which must
# get as far as looking for the device.
gate_args=(gate --json "$out/gate.json")
gate_rc=0
if [ "$dry" = 1 ]; then
  gate_args+=(--target cpu --op rms_norm --class normal)
  step gate 60 "$tool" "${gate_args[@]}" || gate_rc=$?
  probe_rc=0
  step gate_gpu_cuda 60 "$tool" gate --target gpu-cuda --op rms_norm --class normal --json "$out/gate_gpu_cuda.json" ||
    probe_rc=$?
  if [ "$probe_rc" != 0 ] && ! grep -q "no CUDA device was found" "$out/gate_gpu_cuda.txt"; then
    echo "run_device: gate --target gpu-cuda exited $probe_rc without reaching the device check:" >&2
    tail -n 5 "$out/gate_gpu_cuda.txt" >&2
    failed=1
  fi
else
  gate_args+=(--target gpu-cuda)
  # Leave the bench at least 90 s of the budget.
  step gate "$(min "$gate_limit" $(($(left) - 90)))" "$tool" "${gate_args[@]}" || gate_rc=$?
fi
tail -n 5 "$out/gate.txt"

# The bench: what is left of the budget, 10 s kept for the summary; it starts no case in
# its last 20 s.
bench_rc=0
bench_limit=$(($(left) - 10))  # step caps it the same way
bench_args=(--json "$out/bench.json" --time-limit $((bench_limit > 40 ? bench_limit - 20 : 20)))
if [ "$dry" = 1 ]; then bench_args+=(--dry-run); fi
step bench "$bench_limit" "$bench" "${bench_args[@]}" || bench_rc=$?
cat "$out/bench.txt"

json_or_null() { if [ -s "$1" ]; then cat "$1"; else printf 'null'; fi; }
{
  printf '{"date": "%s", "dry_run": %s, "seconds": %s, "budget_s": %s, "gate_exit": %s, "bench_exit": %s,\n' \
    "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$([ "$dry" = 1 ] && echo true || echo false)" \
    "$(($(date +%s) - start))" "$budget" "$gate_rc" "$bench_rc"
  printf '"timed_out": [%s], "steps": {%s},\n' "$(IFS=,; echo "${timed_out[*]:-}")" "$steps_json"
  printf '"glibc": {"machine": "%s", "required": "%s"}, "libstdcxx": {"choice": "%s", "packed": %s, "used": "%s"},\n' \
    "$glibc_have" "$glibc_need" "$cxx_mode" "$([ "$use_packed_cxx" = 1 ] && echo true || echo false)" "$cxx_used"
  printf '"gate": '; json_or_null "$out/gate.json"
  if [ "$dry" = 1 ]; then printf ',\n"gate_gpu_cuda": '; json_or_null "$out/gate_gpu_cuda.json"; fi
  printf ',\n"bench": '; json_or_null "$out/bench.json"; printf '}\n'
} > "$out/gpu_summary.json"
echo "run_device: summary in $out/gpu_summary.json ($(($(date +%s) - start)) s${timed_out:+, timed out: ${timed_out[*]}})"
[ "$failed" = 0 ] && [ "$gate_rc" = 0 ] && [ "$bench_rc" = 0 ]
