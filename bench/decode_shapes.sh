#!/bin/bash
# Every op at its decode shape (issue 14's list), cold, on 1 and 2 Halide threads: one line
# per bench row with its median of 3, GB/s, vs_copy, vs_copy_paired (the copy timed after every call)
# and, for attention, vs_read_paired.
# Usage: bench/decode_shapes.sh [BUILD_DIR] (default build). docs/performance.md quotes it.
set -euo pipefail
bench="${1:-build}/bench"
rows=(
  "rms_norm_bench:rows:1/"
  "add_rms_norm_bench:rows:1/"
  "silu_mul_bench:tokens:1/"
  "per_token_quant_bench:rows:1/"
  "rope_bench:BM_rope/.*tokens:1/"
  "attention_bench:S:16/|decode/S:512"
  "qkv_attention_bench:decode/f16/S:512|decode/f32/S:512|int8/f16_wi8/S:512"
)
context=1
for threads in 1 2; do
  for row in "${rows[@]}"; do
    out=$(HL_NUM_THREADS=$threads "$bench/${row%%:*}" --benchmark_filter="${row#*:}" --benchmark_repetitions=3 \
          --benchmark_report_aggregates_only=true 2>&1)
    if ((context)); then  # the machine and the tiers, as every bench prints them
      grep -E '^(cpu|cpu_features|dispatched_tiers):' <<<"$out" || true
      context=0
    fi
    grep median <<<"$out" | sed -E 's/\/manual_time_median//' |
      awk -v t="$threads" '{ printf "threads=%s %s %s %s", t, $1, $2, $3
                             for (i = 4; i <= NF; ++i) if ($i ~ /^(GB\/s|vs_copy|vs_copy_paired|vs_read_paired)=/) printf " %s", $i
                             print "" }'
  done
done
