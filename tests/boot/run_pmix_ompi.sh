#!/usr/bin/env bash
# Runs N copies of a program under Debian's Open MPI mpirun, which acts as
# the PMIx server for nicq's PmixBootstrap. usage: run_pmix_ompi.sh N prog [args...]
# Exit 77 (ctest skip) when Open MPI's launcher is not installed.
set -u
n=$1; shift
prog=$1; shift
launcher=$(command -v mpirun.openmpi || true)
if [[ -z $launcher ]]; then
  echo "SKIP: mpirun.openmpi not found (apt-get install openmpi-bin)"
  exit 77
fi
args=(--oversubscribe -n "$n")
[[ $(id -u) == 0 ]] && args=(--allow-run-as-root "${args[@]}")
# Keep Open MPI off the network and quiet: one node, loopback only.
export OMPI_MCA_btl=self OMPI_MCA_plm=isolated OMPI_MCA_rmaps_base_oversubscribe=1 \
       OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo
unset NICQ_RANK NICQ_SIZE NICQ_BOOT_DIR NICQ_LOCAL_RANK NICQ_LOCAL_SIZE
exec timeout -k 5 60 "$launcher" "${args[@]}" "$prog" "$@"
