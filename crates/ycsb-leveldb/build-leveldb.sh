#!/usr/bin/env bash
# Builds a LevelDB source tree as an optimised static library and writes a
# Cargo config file that links ycsb-rs against it, without editing project
# files:
#
#   crates/ycsb-leveldb/build-leveldb.sh [SOURCE_DIR] [OUT_DIR]
#   cargo build --release --config OUT_DIR/cargo-config.toml
#
# SOURCE_DIR: a LevelDB checkout (for example your modified one). Default:
#   the LevelDB 1.22 source bundled in the leveldb-sys crate.
# OUT_DIR: where the build goes. Default: target/leveldb-custom.
# CC/CXX: the compilers (default clang/clang++: LevelDB 1.22 does not build
#   with Debian's gcc 12). BUILD_TYPE: the CMake build type (default Release).
# Needs cmake and clang (Debian: apt-get install cmake clang).
# See docs/engines-leveldb.md.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
src=${1:-}
out=${2:-$repo/target/leveldb-custom}

if [[ -z $src ]]; then
    manifest=$(cd "$repo" && cargo metadata --format-version 1 --offline 2>/dev/null |
        sed -n 's/.*"manifest_path":"\([^"]*leveldb-sys-[^"]*\/Cargo.toml\)".*/\1/p' | head -n1) || true
    if [[ -z $manifest ]]; then
        # The regex above reads one long JSON line; fall back to the registry.
        manifest=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/leveldb-sys-*/Cargo.toml 2>/dev/null | sort -V | tail -n1)
    fi
    [[ -n $manifest ]] || { echo "leveldb-sys source not found: run 'cargo fetch' first or pass SOURCE_DIR" >&2; exit 1; }
    src=$(ls -d "$(dirname "$manifest")"/deps/leveldb-* | head -n1)
fi
[[ -f $src/CMakeLists.txt ]] || { echo "$src is not a LevelDB source tree (no CMakeLists.txt)" >&2; exit 1; }

command -v cmake >/dev/null || { echo "cmake is needed (Debian: apt-get install cmake)" >&2; exit 1; }
mkdir -p "$out"
out=$(cd "$out" && pwd)
build=$out/build

# A fresh build directory: a cache left by another compiler breaks the build.
rm -rf "$build"
CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S "$src" -B "$build" \
    -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" \
    -DBUILD_SHARED_LIBS=OFF \
    -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
    -DLEVELDB_BUILD_TESTS=OFF \
    -DLEVELDB_BUILD_BENCHMARKS=OFF \
    -DLEVELDB_INSTALL=OFF >"$out/cmake.log"
cmake --build "$build" --target leveldb -j"$(nproc)" >>"$out/cmake.log"

# Only the static library in the search directory, so the linker cannot
# pick a shared libleveldb from elsewhere first.
mkdir -p "$out/lib"
cp "$build/libleveldb.a" "$out/lib/"

libs='"leveldb"'
if grep -q '^HAVE_SNAPPY:INTERNAL=1' "$build/CMakeCache.txt"; then
    libs+=', "snappy"'
fi
if grep -q '^HAVE_CRC32C:INTERNAL=1' "$build/CMakeCache.txt"; then
    libs+=', "crc32c"'
fi
libs+=', "stdc++"'

# CMake's Release, RelWithDebInfo and MinSizeRel define NDEBUG; Debug does
# not. ycsb-leveldb's build script reads this (DEP_LEVELDB_ASSERTIONS) to
# report the build of a static library.
case ${BUILD_TYPE:-Release} in
    Release | RelWithDebInfo | MinSizeRel) assertions=disabled ;;
    *) assertions=enabled ;;
esac

triple=$(rustc -vV | sed -n 's/^host: //p')
cat >"$out/cargo-config.toml" <<EOF
# Links the leveldb-sys crate against $src
# (built by crates/ycsb-leveldb/build-leveldb.sh; replaces leveldb-sys's
# build script). Use: cargo build --release --config $out/cargo-config.toml
[target.$triple.leveldb]
rustc-link-search = ["native=$out/lib"]
rustc-link-lib = [$libs]
assertions = "$assertions"
EOF
echo "built $out/lib/libleveldb.a from $src"
echo "use: cargo build --release --config $out/cargo-config.toml"
