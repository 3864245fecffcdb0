#!/bin/sh
# Installs the build tree into a fresh prefix, then builds a tiny consumer
# against it twice: with CMake's find_package(gpk) and with pkg-config.
set -eu
build=$1
prefix=$2/prefix
rm -rf "$2"
mkdir -p "$2"
cmake --install "$build" --prefix "$prefix" >"$2/install.log"
test -f "$prefix/include/gpk/gpk.h"
test -x "$prefix/bin/gpk"
"$prefix/bin/gpk" --version
src=$(dirname "$0")/consumer
cmake -S "$src" -B "$2/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" >"$2/cmake.log"
cmake --build "$2/cmake-build" >"$2/build.log"
"$2/cmake-build/consumer"
libdir=$(ls -d "$prefix"/lib*/pkgconfig | head -n 1)
PKG_CONFIG_PATH=$libdir
export PKG_CONFIG_PATH
cc -std=c11 "$src/main.c" -o "$2/consumer-pc" $(pkg-config --cflags --libs gpk) \
   -Wl,-rpath,"$(pkg-config --variable=libdir gpk)"
"$2/consumer-pc"
echo "install test passed"
