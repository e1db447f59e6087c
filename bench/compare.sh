#!/usr/bin/env bash
# Side by side on 2 local ranks: nicq (per provider), the raw libfabric
# floor (per provider), Debian's MPICH and Open MPI, all running the same
# benchmark sources (nicq_latency.c, nicq_bw.c).
#
# usage: bench/compare.sh [--quick] [outdir]
#   --quick   fewer iterations and sizes up to 64 KiB (a smoke run)
# NICQ_BENCH_ITERS sets the iterations per size (default 10000; OSU rules
# divide it by 10 above 8 KiB).
# Results go to outdir (default build/bench-results/<date>), one file per
# run, and a summary of the 8-byte half round trip is printed at the end.
# Expects nicq built in build/ (scripts/setup.sh); installs MPICH and
# Open MPI development packages when missing.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../scripts/common.sh"
quick=
[[ ${1:-} == --quick ]] && { quick=1; shift; }
out=${1:-$NICQ_ROOT/build/bench-results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
bin=$NICQ_ROOT/build/bin
providers=(shm "tcp;ofi_rxm" sockets)
if [[ -n $quick ]]; then
  lat_args=(-m 1:65536 -i 1000 -x 100)
  bw_args=(-m 1:65536 -i 1000 -x 100)
else
  lat_args=(-m 1:4194304 -i "${NICQ_BENCH_ITERS:-10000}" -x 200)
  bw_args=(-m 1:4194304 -i "${NICQ_BENCH_ITERS:-10000}" -x 200)
fi

install_packages libmpich-dev mpich libopenmpi-dev openmpi-bin || exit 1
for b in nicqrun nicq_latency nicq_bw fi_pingpong_raw; do
  [[ -x $bin/$b ]] || { echo "missing $bin/$b: build nicq first (scripts/setup.sh)"; exit 1; }
done

# The same sources, built by the system MPIs' wrappers.
sysbin=$out/sysmpi
mkdir -p "$sysbin"
for mpi in mpich openmpi; do
  for b in nicq_latency nicq_bw; do
    "mpicc.$mpi" -O2 -o "$sysbin/${b}_$mpi" "$here/$b.c" || { echo "mpicc.$mpi failed on $b.c"; exit 1; }
  done
done
ompi_run=(mpirun.openmpi --oversubscribe -n 2)
[[ $(id -u) == 0 ]] && ompi_run=(mpirun.openmpi --allow-run-as-root --oversubscribe -n 2)

run() {  # <result-name> command...: run with a 10-minute bound, keep the output
  local name=$1
  shift
  note "$name: $*"
  if ! timeout 600 "$@" >"$out/$name.txt" 2>&1; then
    echo "   (failed, see $out/$name.txt)"
    tail -3 "$out/$name.txt"
  fi
}

for p in "${providers[@]}"; do
  tag=${p//;/+}
  raw_args=()
  [[ $p == sockets ]] && raw_args=(-b)  # sockets' own progress thread needs the core
  run "raw.$tag.latency" "$bin/nicqrun" -n 2 "$bin/fi_pingpong_raw" -p "$p" "${raw_args[@]}" "${lat_args[@]}"
  run "nicq.$tag.latency" env NICQ_PROVIDER="$p" "$bin/nicqrun" -n 2 "$bin/nicq_latency" "${lat_args[@]}"
  run "nicq.$tag.bw" env NICQ_PROVIDER="$p" "$bin/nicqrun" -n 2 "$bin/nicq_bw" "${bw_args[@]}"
done
run mpich.latency mpiexec.mpich -n 2 "$sysbin/nicq_latency_mpich" "${lat_args[@]}"
run mpich.bw mpiexec.mpich -n 2 "$sysbin/nicq_bw_mpich" "${bw_args[@]}"
OMPI_MCA_btl=self,vader run openmpi.latency "${ompi_run[@]}" "$sysbin/nicq_latency_openmpi" "${lat_args[@]}"
OMPI_MCA_btl=self,vader run openmpi.bw "${ompi_run[@]}" "$sysbin/nicq_bw_openmpi" "${bw_args[@]}"

value_at() {  # <file> <size>: the second column of the row for that size
  awk -v s="$2" '$1 == s { print $2; exit }' "$1" 2>/dev/null
}
{
  echo "# 2 ranks on $(hostname -s): $(nproc) cores, $(uname -r); $(date -u)"
  printf '%-28s %14s %14s %16s\n' "run" "8 B lat (us)" "64 KiB lat" "1 MiB bw (MB/s)"
  for f in "$out"/*.latency.txt; do
    name=$(basename "$f" .latency.txt)
    printf '%-28s %14s %14s %16s\n' "$name" "$(value_at "$f" 8)" "$(value_at "$f" 65536)" \
      "$(value_at "$out/$name.bw.txt" 1048576)"
  done
} | tee "$out/summary.txt"
