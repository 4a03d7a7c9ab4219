#!/usr/bin/env bash
# Builds RocksDB for release (NDEBUG, -O2, portable) as a shared library,
# plus db_bench from the same source, linked to that library:
#
#   crates/ycsb-rocksdb/build-rocksdb.sh [SOURCE_DIR] OUT_DIR
#
# SOURCE_DIR: a RocksDB source tree. Default: the RocksDB that the
#   librocksdb-sys crate used by this workspace bundles (served by the crate
#   registry; run 'cargo fetch' first).
# OUT_DIR: where the build goes; it gets lib/ (librocksdb.so*), include/,
#   bin/db_bench and build.log.
# JOBS: parallel compile jobs (default: nproc).
# Needs make, g++, and libgflags-dev (db_bench), libsnappy-dev, zlib1g-dev,
# libbz2-dev, liblz4-dev, libzstd-dev (compression, detected by RocksDB).
# `cargo xtask engines` runs this; see docs/engines-rocksdb.md.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
if [[ $# -eq 1 ]]; then src=; out=$1; else src=${1:-}; out=${2:?usage: build-rocksdb.sh [SOURCE_DIR] OUT_DIR}; fi

if [[ -z $src ]]; then
    # The version in Cargo.lock, so that the C API matches the rocksdb crate.
    version=$(sed -n '/^name = "librocksdb-sys"$/{n;s/^version = "\(.*\)"$/\1/p}' "$repo/Cargo.lock" | head -n1)
    [[ -n $version ]] || { echo "librocksdb-sys not found in $repo/Cargo.lock" >&2; exit 1; }
    src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$version"/rocksdb 2>/dev/null | head -n1) || true
    if [[ -z $src ]]; then
        (cd "$repo" && cargo fetch --locked >/dev/null)
        src=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/"librocksdb-sys-$version"/rocksdb | head -n1)
    fi
fi
[[ -f $src/Makefile && -f $src/include/rocksdb/version.h ]] || { echo "$src is not a RocksDB source tree" >&2; exit 1; }
for tool in make g++; do
    command -v $tool >/dev/null || { echo "$tool is needed (Debian: apt-get install build-essential)" >&2; exit 1; }
done
[[ -f /usr/include/gflags/gflags.h ]] || { echo "gflags is needed for db_bench (Debian: apt-get install libgflags-dev)" >&2; exit 1; }

mkdir -p "$out"
out=$(cd "$out" && pwd)
# RocksDB's Makefile builds in its tree: build in a private copy, never in
# the registry's sources. A copy of the same sources is kept, so that an
# interrupted build resumes where it stopped (make rebuilds only what is
# missing; the flags below never change).
rm -rf "$out/lib" "$out/include" "$out/bin"
if [[ ! -f $out/src/.copied-from || $(cat "$out/src/.copied-from") != "$src" ]]; then
    rm -rf "$out/src"
    cp -a "$src" "$out/src"
    chmod -R u+w "$out/src"
    echo "$src" >"$out/src/.copied-from"
fi
cd "$out/src"
# DEBUG_LEVEL=0: -O2 -DNDEBUG (RocksDB's release). PORTABLE=1: no
# -march=native, so the library runs on any x86-64 machine. LIB_MODE=shared:
# db_bench links the shared library built beside it. Warnings are not
# errors: a newer compiler than RocksDB's CI must not fail the build.
make -j"${JOBS:-$(nproc)}" DEBUG_LEVEL=0 LIB_MODE=shared PORTABLE=1 \
    DISABLE_WARNING_AS_ERROR=1 shared_lib db_bench

mkdir -p "$out/lib" "$out/bin"
cp -a librocksdb.so* "$out/lib/"
cp -a include "$out/include"
cp db_bench "$out/bin/db_bench"
# db_bench was linked with rpath $ORIGIN: point it at lib/.
if command -v patchelf >/dev/null; then
    patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/db_bench"
else
    ln -sf ../lib/"$(ls librocksdb.so.*.*.* | head -n1)" "$out/bin/"
    for l in librocksdb.so*; do ln -sf "../lib/$l" "$out/bin/$l"; done
fi
echo "built $out/lib/librocksdb.so and $out/bin/db_bench from $src"
