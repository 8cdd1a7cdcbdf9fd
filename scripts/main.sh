#!/usr/bin/env bash
# The main job on built-in defaults: set up, then gate every shipped operator on every
# CPU target and print the report. Exit status is the gate's (0 all pass).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >&2
exec build/tools/npukit gate --target cpu --target cpu:avx2 --target cpu:sse41 "$@"
