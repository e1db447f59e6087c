#!/usr/bin/env bash
# usage: package_deb.sh <build-dir> <package_deb tool>
# The Debian package of the build tree holds the wrappers, the launcher and
# its aliases, the headers, the library, pkg-config and CMake files, and
# depends on libfabric. Skipped (77) without dpkg-deb.
set -u
build=$1 tool=$2
command -v dpkg-deb >/dev/null || { echo "SKIP: no dpkg-deb"; exit 77; }
out=$(mktemp -d /tmp/nicq-pkg-deb.XXXXXX)
trap 'rm -rf "$out"' EXIT
"$tool" "$build" "$out" || { echo "FAIL: package_deb.sh"; exit 1; }
deb=$(ls "$out"/nicq_*.deb 2>/dev/null | head -1)
[[ -n $deb ]] || { echo "FAIL: no .deb in $out"; exit 1; }
files=$(dpkg-deb -c "$deb" | awk '{print $6}')
for f in ./usr/bin/mpicc ./usr/bin/mpicxx ./usr/bin/nicqrun ./usr/bin/mpiexec ./usr/bin/nicq_info \
         ./usr/bin/nicq_sim ./usr/include/mpi.h ./usr/include/nicq/mpi_dropin.h \
         ./usr/lib/pkgconfig/nicq.pc ./usr/lib/cmake/nicq/nicqConfig.cmake; do
  grep -qx -- "$f" <<<"$files" || { echo "FAIL: $f not in $deb"; exit 1; }
done
grep -q "libnicq.so.0" <<<"$files" || { echo "FAIL: libnicq.so.0 not in $deb"; exit 1; }
deps=$(dpkg-deb -f "$deb" Depends)
[[ $deps == *libfabric* ]] || { echo "FAIL: Depends lacks libfabric: $deps"; exit 1; }
echo "$(basename "$deb"): Depends: $deps"
echo PASS
