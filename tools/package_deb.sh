#!/usr/bin/env bash
# usage: tools/package_deb.sh <build-dir> [out-dir]
# Builds the Debian package of an already built tree without rebuilding it:
# stages `cmake --install` under /usr, then runs CPack's DEB generator on the
# staged files with the project's CPack settings (cmake/NicqPackaging.cmake).
# (`cpack -G DEB` in the build directory does the same but first builds
# every target, tests included.)
set -euo pipefail
build=$(cd "$1" && pwd)
out=${2:-$build/packages}
mkdir -p "$out"
stage=$(mktemp -d /tmp/nicq-deb-stage.XXXXXX)
trap 'rm -rf "$stage"' EXIT
DESTDIR=$stage/root cmake --install "$build" --prefix /usr >"$stage/install.log" 2>&1 || {
  cat "$stage/install.log"; exit 1; }
sed -e "s|^set(CPACK_INSTALL_CMAKE_PROJECTS .*|set(CPACK_INSTALL_CMAKE_PROJECTS \"\")|" \
    "$build/CPackConfig.cmake" >"$stage/config.cmake"
echo "set(CPACK_INSTALLED_DIRECTORIES \"$stage/root;/\")" >>"$stage/config.cmake"
cpack --config "$stage/config.cmake" -G DEB -B "$out" | grep -v "^CPack: - Install"
rm -rf "$out/_CPack_Packages"
