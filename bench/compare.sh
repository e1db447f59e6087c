#!/usr/bin/env bash
# Side by side on local ranks: nicq (per provider), the raw libfabric floor
# (per provider), Debian's MPICH and Open MPI, all running the same
# benchmark sources.
#
# usage: bench/compare.sh [--quick] [--suite-only | --floor-only] [outdir]
#   --quick       fewer iterations, sizes up to 64 KiB (point-to-point) and
#                 1 MiB (collectives): a smoke run of some minutes
#   --suite-only  skip the latency/bandwidth floor comparison (part 1)
#   --floor-only  skip the benchmark suite (part 2)
# Environment:
#   NICQ_BUILD        nicq's build directory (default build/, scripts/setup.sh)
#   NICQ_BENCH_ITERS  part 1's iterations per size (default 10000; OSU rules
#                     divide it by 10 above 8 KiB)
#   NICQ_BENCH_REPS   part 2's repetitions, medians taken (default 3)
#   NICQ_BENCH_PROVIDERS  part 2's nicq providers (default "shm,tcp;ofi_rxm";
#                     "shm@thread" adds NICQ_PROGRESS_THREAD=1)
#   NICQ_BENCH_COLL_RANKS part 2's rank counts for collectives (default 2)
#   NICQ_BENCH_ONLY   part 2: a regular expression on benchmark names
#                     (e.g. '^allreduce_persistent')
#
# Part 1: for each provider the raw floor (fi_pingpong_raw), nicq_latency
# and nicq_bw, then MPICH and Open MPI; a summary of the 8-byte half round
# trip (summary.txt). Part 2 (compare.py): every benchmark of the suite on
# nicq and each other MPI, in alternation, repeated; CSV and PNG per
# benchmark and results.md (medians, ratios nicq/other).
# Results go to outdir (default $NICQ_BUILD/bench-results/<date>). Installs
# the MPICH, Open MPI and gnuplot packages when missing.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/../scripts/common.sh"
quick= floor=1 suite=1
while [[ ${1:-} == --* ]]; do
  case $1 in
    --quick) quick=1 ;;
    --suite-only) floor= ;;
    --floor-only) suite= ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
build=${NICQ_BUILD:-$NICQ_ROOT/build}
out=${1:-$build/bench-results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$out"
bin=$build/bin
providers=(shm "tcp;ofi_rxm" sockets)
if [[ -n $quick ]]; then
  lat_args=(-m 1:65536 -i 1000 -x 100)
  bw_args=(-m 1:65536 -i 1000 -x 100)
else
  lat_args=(-m 1:4194304 -i "${NICQ_BENCH_ITERS:-10000}" -x 200)
  bw_args=(-m 1:4194304 -i "${NICQ_BENCH_ITERS:-10000}" -x 200)
fi

install_packages libmpich-dev mpich libopenmpi-dev openmpi-bin gnuplot-nox || exit 1
for b in nicqrun nicq_latency nicq_bw fi_pingpong_raw nicq_allreduce nicq_ring_queued; do
  [[ -x $bin/$b ]] || { echo "missing $bin/$b: build nicq first (scripts/setup.sh)"; exit 1; }
done
{
  echo "# $(hostname -s): $(nproc) cores, $(uname -r); $(date -u)"
  echo "# load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "# nicq $(git -C "$NICQ_ROOT" rev-parse --short HEAD 2>/dev/null)"
} >"$out/machine.txt"

if [[ -n $floor ]]; then
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
    run "nicq.$tag.latency" env NICQ_PROVIDER="$p" "$bin/nicqrun" -n 2 "$bin/nicq_latency" "${lat_args[@]}" -q
    run "nicq.$tag.bw" env NICQ_PROVIDER="$p" "$bin/nicqrun" -n 2 "$bin/nicq_bw" "${bw_args[@]}" -q
  done
  run mpich.latency mpiexec.mpich -n 2 "$sysbin/nicq_latency_mpich" "${lat_args[@]}" -q
  run mpich.bw mpiexec.mpich -n 2 "$sysbin/nicq_bw_mpich" "${bw_args[@]}" -q
  OMPI_MCA_btl=self,vader run openmpi.latency "${ompi_run[@]}" "$sysbin/nicq_latency_openmpi" "${lat_args[@]}" -q
  OMPI_MCA_btl=self,vader run openmpi.bw "${ompi_run[@]}" "$sysbin/nicq_bw_openmpi" "${bw_args[@]}" -q

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
fi

if [[ -n $suite ]]; then
  note "benchmark suite side by side (compare.py), results in $out/suite"
  python3 "$here/compare.py" --nicq-bin "$bin" --out "$out/suite" ${quick:+--quick} \
    --reps "${NICQ_BENCH_REPS:-3}" --providers "${NICQ_BENCH_PROVIDERS:-shm,tcp;ofi_rxm}" \
    --coll-ranks "${NICQ_BENCH_COLL_RANKS:-2}" --only "${NICQ_BENCH_ONLY:-}" || exit 1
  echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$out/machine.txt"
fi
