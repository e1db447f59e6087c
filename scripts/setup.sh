#!/usr/bin/env bash
# The main job: install what is missing (Debian 12), build nicq into build/,
# and run the demos on 4 local ranks with nicqrun. Safe to run again: it
# installs and rebuilds only what changed.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$NICQ_ROOT"

install_packages "${NICQ_BUILD_PACKAGES[@]}"
build "$NICQ_ROOT/build" "nicq (RelWithDebInfo)" -DCMAKE_BUILD_TYPE=RelWithDebInfo
bin=$NICQ_ROOT/build/bin

note "providers and backends (build/bin/nicq_info)"
"$bin/nicq_info" --providers

# Each demo: [program args...] run as `nicqrun -n 4 --timeout 120`.
status=0
for demo in "nicq_ring_demo 10 1024" "nicq_queued_ring" "nicq_persistent_allreduce"; do
  prog=${demo%% *}
  args=
  [[ $demo == *" "* ]] && args=${demo#* }
  if [[ ! -x $bin/$prog ]]; then
    echo "FAILED: $bin/$prog was not built"
    exit 1
  fi
  note "demo: nicqrun -n 4 $prog $args"
  # shellcheck disable=SC2086
  if ! "$bin/nicqrun" -n 4 --timeout 120 "$bin/$prog" $args; then
    echo "FAILED: demo $prog"
    status=1
  fi
done
((status == 0)) && note "done: build/bin has nicqrun, mpicc, mpicxx, nicq_info; see README.md"
exit $status
