#!/usr/bin/env bash
# Set up, build, and run the whole test suite (GoogleTest, the Python cross-checks and a
# smoke run of every bench).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest --output-on-failure -j"$(nproc)" "$@"
