#!/bin/bash
# nicqrun --bind-to core: every rank gets its own block of nicqrun's CPUs
# and NICQ_BOUND=1; --bind-to none (and no flag) leaves them all shared.
# Usage: nicqrun_bind.sh <nicqrun>
set -u
run=$1
probe='echo "$NICQ_RANK ${NICQ_BOUND:-unset} $(grep Cpus_allowed_list /proc/self/status | cut -f2)"'
mine=$(grep Cpus_allowed_list /proc/self/status | cut -f2)
ncpu=$(nproc)
fail() { echo "FAIL: $*"; exit 1; }

out=$("$run" -n 2 --bind-to core /bin/sh -c "$probe") || fail "nicqrun --bind-to core exited $?"
echo "$out"
[ "$(echo "$out" | wc -l)" = 2 ] || fail "expected two lines"
echo "$out" | awk '$2 != "1" {bad = 1} END {exit !bad}' && fail "a rank lacks NICQ_BOUND=1"
a=$(echo "$out" | awk '$1 == 0 {print $3}')
b=$(echo "$out" | awk '$1 == 1 {print $3}')
if [ "$ncpu" -ge 2 ]; then
  [ "$a" != "$b" ] || fail "ranks 0 and 1 share CPUs $a"
  [ "$a" != "$mine" ] || fail "rank 0 kept all of nicqrun's CPUs ($mine)"
fi

out=$("$run" -n 2 --bind-to none /bin/sh -c "$probe") || fail "nicqrun --bind-to none exited $?"
echo "$out"
echo "$out" | awk '$2 != "unset" {bad = 1} END {exit !bad}' && fail "NICQ_BOUND set without binding"
[ "$(echo "$out" | awk '{print $3}' | sort -u)" = "$mine" ] || fail "unbound ranks lost CPUs"
echo PASS
