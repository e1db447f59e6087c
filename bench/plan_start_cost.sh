#!/usr/bin/env bash
# Host cost of one start of a resident plan, per backend (docs/performance.md,
# issue 15): instructions and system calls inside MPI_Start / MPI_Enqueue_start
# (callgrind on rank 0, --toggle-collect=start_epoch, --collect-systime), or
# the mean ns per start without valgrind.
#   usage: bench/plan_start_cost.sh count|time [iterations] [filter regex]
# Rows: <backend> <collective> <form>; the filter matches "backend coll form".
set -u
mode=${1:-count}
iters=${2:-}
filter=${3:-.}
B=${BUILD:-build}/bin
out=${OUT_DIR:-/tmp/plan_start_cost.$$}
mkdir -p "$out"
wrap="$out/wrap.sh"
cat >"$wrap" <<'WRAP'
#!/usr/bin/env bash
if [ "${NICQ_RANK:-0}" = 0 ]; then
  exec valgrind --tool=callgrind --collect-systime=usec --toggle-collect=start_epoch \
    --callgrind-out-file="$CG_OUT" "$@" 2>/dev/null
fi
exec "$@"
WRAP
chmod +x "$wrap"

backends=(
  "native|NICQ_OFFLOAD=native NICQ_PROVIDER=sockets"
  "emu-shm|NICQ_OFFLOAD=emulated NICQ_PROVIDER=shm NICQ_PROGRESS_THREAD=0"
  "emu-shm+thread|NICQ_OFFLOAD=emulated NICQ_PROVIDER=shm NICQ_PROGRESS_THREAD=1"
  "emu-tcp|NICQ_OFFLOAD=emulated NICQ_PROVIDER=tcp;ofi_rxm NICQ_PROGRESS_THREAD=0"
  "emu-tcp+thread|NICQ_OFFLOAD=emulated NICQ_PROVIDER=tcp;ofi_rxm NICQ_PROGRESS_THREAD=1"
  "shm-trigger|NICQ_OFFLOAD=shm NICQ_PROVIDER=shm"
)
for be in "${backends[@]}"; do
  name=${be%%|*}
  envs=${be#*|}
  for coll in allreduce neighbor; do
    ranks=2
    [ "$coll" = neighbor ] && ranks=4
    for form in start enqueue; do
      row="$name $coll $form"
      [[ "$row" =~ $filter ]] || continue
      q=""
      [ "$form" = enqueue ] && q="-q"
      # Without an agent or a NIC only MPI calls finish an epoch: no naps.
      naps=1000
      case "$name" in emu-shm | emu-tcp | shm-trigger) naps=0 ;; esac
      n=$iters
      if [ -z "$n" ]; then
        n=2000
        [ "$name" = native ] && n=200
        [ "$mode" = count ] && n=$((n / 4))
      fi
      args=(-c "$coll" -m 8 -i "$n" -n "$naps" $q)
      if [ "$mode" = count ]; then
        cg="$out/cg.${name}.${coll}.${form}"
        rm -f "$cg"
        env $envs CG_OUT="$cg" timeout 900 "$B/nicqrun" -n $ranks "$wrap" "$B/nicq_plan_host_cost" \
          "${args[@]}" >"$cg.log" 2>&1
        rc=$?
        python3 - "$cg" "$n" "$row" "$rc" <<'PY'
import sys
path, n, row, rc = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
ev, tot = [], []
try:
    for line in open(path):
        if line.startswith("events:"):
            ev = line.split()[1:]
        elif line.startswith(("summary:", "totals:")):
            tot = [int(x) for x in line.split()[1:]]
except OSError:
    pass
d = dict(zip(ev, tot))
print(f"{row:40s} rc={rc} Ir/start={d.get('Ir', 0) / n:8.0f} "
      f"syscalls/start={d.get('sysCount', 0) / n:6.2f} sys_us/start={d.get('sysTime', 0) / n:7.2f}")
PY
      else
        env $envs timeout 900 "$B/nicqrun" -n $ranks "$B/nicq_plan_host_cost" "${args[@]}" \
          >"$out/time.log" 2>&1
        rc=$?
        echo "$row rc=$rc load=$(cut -d' ' -f1 /proc/loadavg) $(grep -oiE '(MPI_Start|MPI_Enqueue_start) [0-9]+ ns' "$out/time.log" | awk '{print $2}' | tr '\n' ' ')"
      fi
    done
  done
done
