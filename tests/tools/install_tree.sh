#!/usr/bin/env bash
# usage: install_tree.sh <build-dir> <ring.c>
# `cmake --install` into a scratch prefix, then checks that the installed
# tree is complete and that its mpicc works from there (mpicc_wrappers.sh).
set -u
build=$1 ring=$2
here=$(dirname "$(readlink -f "$0")")
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || {
  cat "$prefix.log"; rm -f "$prefix.log"; echo "FAIL: cmake --install"; exit 1; }
rm -f "$prefix.log"
libdir=$(dirname "$(find "$prefix" -name 'libnicq.so' | head -1)")
for f in bin/nicqrun bin/nicq_info bin/mpicc bin/mpicxx bin/mpiexec bin/mpirun; do
  [[ -e $prefix/$f ]] || { echo "FAIL: $f not installed"; exit 1; }
done
[[ -f $libdir/libnicq.so ]] || { echo "FAIL: libnicq.so not installed"; exit 1; }
"$prefix/bin/nicq_info" -e | grep -q NICQ_PROVIDER || { echo "FAIL: installed nicq_info -e"; exit 1; }
exec "$here/mpicc_wrappers.sh" "$prefix/bin" "$libdir" "$prefix/include" "$ring"
