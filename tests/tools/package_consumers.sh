#!/usr/bin/env bash
# usage: package_consumers.sh <build-dir> <source-dir>
# Installs nicq into a scratch prefix and uses it the three ways a user
# would: the installed mpicc builds a C program that the installed nicqrun
# runs on 2 ranks; CMake's own FindMPI (pointed at that mpicc) and
# find_package(nicq) configure and build a small project whose programs
# run; pkg-config --cflags --libs nicq gives flags that build one more.
set -u
build=$1 src=$2
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d /tmp/nicq-pkg-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 || {
  cat "$tmp/install.log"; fail "cmake --install"; }
for f in bin/mpicc bin/mpicxx bin/nicqrun bin/mpiexec bin/mpirun bin/nicq_info include/mpi.h \
         include/nicq/mpi_dropin.h; do
  [[ -e $prefix/$f ]] || fail "$f not installed"
done
[[ -x $prefix/bin/nicq_sim ]] || fail "nicq_sim not installed"
pc=$(find "$prefix" -name nicq.pc | head -1)
cfg=$(find "$prefix" -name nicqConfig.cmake | head -1)
[[ -n $pc && -n $cfg ]] || fail "nicq.pc or nicqConfig.cmake not installed"
[[ -f $(dirname "$cfg")/nicqConfigVersion.cmake ]] || fail "nicqConfigVersion.cmake missing"

# A program that checks what it receives, so "it ran" means "it worked".
cat >"$tmp/sum.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  int rank, size, sum = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine = rank + 1;
  MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (sum != size * (size + 1) / 2) {
    printf("rank %d: sum %d is wrong\n", rank, sum);
    MPI_Abort(MPI_COMM_WORLD, 3);
  }
  if (rank == 0) printf("sum OK: %d ranks\n", size);
  MPI_Finalize();
  return 0;
}
C
unset LD_LIBRARY_PATH
run2() {  # run2 <program>: 2 ranks under the installed launcher, output checked
  local out
  out=$("$prefix/bin/mpiexec" -n 2 --timeout 60 "$1" 2>&1) || fail "$1 exited $?: $out"
  [[ $out == *"sum OK: 2 ranks"* ]] || fail "$1 did not report OK: $out"
}

# 1. The installed mpicc; -show prints the underlying command, not a build.
show=$("$prefix/bin/mpicc" -show -o prog prog.c)
[[ $show == *"-I$prefix/include"* && $show == *"-lnicq"* ]] || fail "mpicc -show: $show"
"$prefix/bin/mpicc" -O2 -o "$tmp/sum_mpicc" "$tmp/sum.c" || fail "mpicc could not build sum.c"
run2 "$tmp/sum_mpicc"
echo "mpicc: OK ($show)"

# 2. CMake: FindMPI through the wrapper, and nicq's own package.
mkdir -p "$tmp/proj"
cp "$tmp/sum.c" "$tmp/proj/"
cp "$tmp/sum.c" "$tmp/proj/sum_cxx.cc"
cat >"$tmp/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(consumer C CXX)
find_package(MPI REQUIRED COMPONENTS C CXX)
find_package(nicq REQUIRED)
add_executable(sum_findmpi sum.c)
target_link_libraries(sum_findmpi PRIVATE MPI::MPI_C)
add_executable(sum_findmpi_cxx sum_cxx.cc)
target_link_libraries(sum_findmpi_cxx PRIVATE MPI::MPI_CXX)
add_executable(sum_nicq sum.c)
target_link_libraries(sum_nicq PRIVATE nicq::nicq)
message(STATUS "consumer: MPI_C_INCLUDE_DIRS=${MPI_C_INCLUDE_DIRS} MPI_C_LIBRARIES=${MPI_C_LIBRARIES}")
message(STATUS "consumer: MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE} nicq_VERSION=${nicq_VERSION}")
CMAKE
cmake -S "$tmp/proj" -B "$tmp/proj/build" -DMPI_C_COMPILER="$prefix/bin/mpicc" \
      -DMPI_CXX_COMPILER="$prefix/bin/mpicxx" \
      -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/proj.log" 2>&1 || {
  cat "$tmp/proj.log"; fail "consumer project did not configure"; }
grep "consumer:" "$tmp/proj.log"
grep -q "MPI_C_LIBRARIES=$prefix/.*libnicq.so" "$tmp/proj.log" || fail "FindMPI did not find libnicq"
grep -q "MPI_C_INCLUDE_DIRS=$prefix/include" "$tmp/proj.log" || fail "FindMPI did not find mpi.h"
cmake --build "$tmp/proj/build" >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log"; fail "consumer project did not build"; }
# The imported targets carry no rpath into the install tree: say where libnicq is.
libdir=$(dirname "$(find "$prefix" -name 'libnicq.so' | head -1)")
LD_LIBRARY_PATH=$libdir run2 "$tmp/proj/build/sum_findmpi"
LD_LIBRARY_PATH=$libdir run2 "$tmp/proj/build/sum_findmpi_cxx"
LD_LIBRARY_PATH=$libdir run2 "$tmp/proj/build/sum_nicq"
echo "FindMPI and find_package(nicq): OK"

# 3. pkg-config.
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs nicq) ||
  fail "pkg-config --cflags --libs nicq"
[[ $flags == *"-I$prefix/include"* || $flags == *"/include"* ]] || fail "pkg-config cflags: $flags"
[[ $flags == *"-lnicq"* ]] || fail "pkg-config libs: $flags"
# shellcheck disable=SC2086
cc -o "$tmp/sum_pc" "$tmp/sum.c" $flags || fail "cc with pkg-config flags: $flags"
LD_LIBRARY_PATH=$libdir run2 "$tmp/sum_pc"
echo "pkg-config: OK ($flags)"
echo PASS
