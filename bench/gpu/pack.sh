#!/usr/bin/env bash
# Packs what the GPU machine needs into one folder (at most 64 MiB may travel): the two
# device binaries (stripped), run_device.sh, in lib/ every other shared library they load
# except glibc's own (libc, libm, libdl, libpthread, librt, the loader): libfmt; and in
# lib/cxx/ this machine's libstdc++ and libgcc_s. The binaries need GLIBCXX/CXXABI versions
# an older machine's libstdc++ lacks, but this libstdc++ itself needs a newer glibc than the
# binaries do (Debian 12's: glibc 2.36 for arc4random), so run_device.sh uses the machine's
# libstdc++ when it has those versions and lib/cxx/ only when it does not.
# glibc cannot travel: pack_requires lists what run_device.sh checks before it runs
# anything, each the newest version any file references (objdump -p):
#   glibc      by the binaries and lib/ (the floor for every machine)
#   glibc_cxx  by lib/cxx/ (the floor where the machine's libstdc++ is too old)
#   glibcxx, cxxabi  by the binaries and lib/ from libstdc++
# Fails if the folder is over 64 MiB or a binary pulls in libHalide or libLLVM. Prints the
# size and what it holds (pack_size_bytes holds the size).
# usage: pack.sh BUILD_DIR DEST
set -euo pipefail
build=$1 dest=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v objdump > /dev/null || { echo "pack: needs objdump (binutils) to read the binaries' version needs" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/lib/cxx"
cp "$build/tools/npukit-device" "$build/bench/gpu_bench" "$here/run_device.sh" "$dest/"
for b in "$dest/npukit-device" "$dest/gpu_bench"; do
  if ldd "$b" | grep -Ei 'libHalide|libLLVM'; then echo "pack: $b links libHalide/libLLVM" >&2; exit 1; fi
  if ldd "$b" | grep -q 'not found'; then echo "pack: $b: a shared library is missing here" >&2; ldd "$b" >&2; exit 1; fi
  ldd "$b" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*) ;;
      libstdc++.so*|libgcc_s.so*) cp -L "$lib" "$dest/lib/cxx/" ;;
      *) cp -L "$lib" "$dest/lib/" ;;
    esac
  done
done
strip "$dest/npukit-device" "$dest/gpu_bench" 2>/dev/null || true
for lib in libstdc++.so.6 libgcc_s.so.1; do
  [ -f "$dest/lib/cxx/$lib" ] || { echo "pack: $lib was not packed (linked statically? then drop this check)" >&2; exit 1; }
done

# newest PREFIX FILE...: the newest PREFIX_x.y version the files reference (not define).
newest() {
  local prefix=$1
  shift
  for f in "$@"; do objdump -p "$f" | sed -n '/^Version References:/,/^$/p'; done |
    grep -oE "${prefix}_[0-9]+(\.[0-9]+)+" | sed "s/^${prefix}_//" | sort -uV | tail -n 1
}
base=("$dest/npukit-device" "$dest/gpu_bench")
for f in "$dest"/lib/*.so*; do base+=("$f"); done
glibc=$(newest GLIBC "${base[@]}")
glibc_cxx=$(newest GLIBC "$dest"/lib/cxx/*)
glibcxx=$(newest GLIBCXX "${base[@]}")
cxxabi=$(newest CXXABI "${base[@]}")
[ -n "$glibc" ] && [ -n "$glibc_cxx" ] && [ -n "$glibcxx" ] ||
  { echo "pack: could not read the GLIBC/GLIBCXX versions the binaries need" >&2; exit 1; }
printf 'glibc=%s\nglibc_cxx=%s\nglibcxx=%s\ncxxabi=%s\n' "$glibc" "$glibc_cxx" "$glibcxx" "$cxxabi" > "$dest/pack_requires"
bytes=$(du -sb "$dest" | cut -f1)
echo "$bytes" > "$dest/pack_size_bytes"
echo "pack: $dest is $bytes bytes ($((bytes >> 20)) MiB of 64): $(cd "$dest" && echo npukit-device gpu_bench lib/*.so* lib/cxx/*)"
echo "pack: needs glibc >= $glibc, and libstdc++ with GLIBCXX_$glibcxx and CXXABI_$cxxabi (else the packed one: glibc >= $glibc_cxx)"
[ "$bytes" -le $((64 << 20)) ] || { echo "pack: over the 64 MiB that may travel" >&2; exit 1; }
