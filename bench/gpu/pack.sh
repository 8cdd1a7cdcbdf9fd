#!/usr/bin/env bash
# Packs what the GPU machine needs into one folder (at most 64 MiB may travel): the two
# device binaries, run_device.sh, and in lib/ the shared libraries they load that are not
# part of glibc/libstdc++ (which the GPU machine has). Fails if the folder is too big or if
# a binary pulls in libHalide or libLLVM.
# usage: pack.sh BUILD_DIR DEST
set -euo pipefail
build=$1 dest=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dest/lib"
cp "$build/tools/npukit-device" "$build/bench/gpu_bench" "$here/run_device.sh" "$dest/"
for b in "$dest/npukit-device" "$dest/gpu_bench"; do
  if ldd "$b" | grep -Ei 'libHalide|libLLVM'; then echo "pack: $b links libHalide/libLLVM" >&2; exit 1; fi
  ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libstdc++.so*|libgcc_s.so*|ld-linux*) ;;
      *) cp -L "$lib" "$dest/lib/" ;;
    esac
  done
done
strip "$dest/npukit-device" "$dest/gpu_bench" 2>/dev/null || true
size=$(du -sm "$dest" | cut -f1)
echo "pack: $dest is $size MiB"
[ "$size" -le 64 ] || { echo "pack: over the 64 MiB that may travel" >&2; exit 1; }
