#!/usr/bin/env bash
# Set up, build, and run the whole test suite (GoogleTest, the Python cross-checks and a
# smoke run of every bench), then the sanitizer tree's: its tests under ASan + UBSan and
# its fuzz targets, each for a bounded time (docs/reliability.md). Fails if either fails.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
status=0
(cd build && ctest --output-on-failure -j"$(nproc)" "$@") || status=$?
# Every report stops the process with an error (UBSan's too: -fno-sanitize-recover=all).
(cd build/sanitize &&
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  ctest --output-on-failure -j"$(nproc)" "$@") || status=$?
exit $status
