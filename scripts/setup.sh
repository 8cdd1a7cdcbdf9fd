#!/usr/bin/env bash
# Installs what npukit needs from Debian's packages (only what is missing), then
# configures and builds everything into build/, and the sanitizer tree into build/sanitize/.
# Idempotent: quick when all is present.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake make g++ binutils pkg-config
  libhalide14-0-dev llvm-14    # Halide 14; llvm-as-14 assembles ops/f16c_convert.ll
  libfmt-dev libcli11-dev nlohmann-json3-dev libdlpack-dev libyaml-cpp-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libdnnl-dev                  # oneDNN: the anchor bench/int8_gemm_bench measures against
  python3 python3-numpy        # /usr/bin/python3 runs the numpy cross-checks
  python3-torch                # torch 1.13 eager, the anchor of bench/rope_vs_torch.py
  libtorch-dev                 # its headers: the PyTorch extension (runtime/torch/)
  pocl-opencl-icd ocl-icd-opencl-dev  # OpenCL on the CPU: CI gates the GPU schedules on it
  clang-14 libclang-rt-14-dev  # the sanitizer tree: ASan, UBSan and libFuzzer (docs/reliability.md)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}"
fi

if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
fi
cmake --build build -j"$(nproc)"

# The sanitizer tree: the kit's own code and its sanitized tests with ASan + UBSan, and the
# fuzz targets, over build/'s kernels (cmake/NpukitSanitize.cmake, docs/reliability.md).
if [ ! -f build/sanitize/CMakeCache.txt ]; then
  cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 -DCMAKE_CXX_COMPILER=clang++-14 \
        -DNPUKIT_SANITIZE=ON -DNPUKIT_PREBUILT_KERNELS="$PWD/build"
fi
cmake --build build/sanitize -j"$(nproc)"
