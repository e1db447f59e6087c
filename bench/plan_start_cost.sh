#!/usr/bin/env bash
# Host cost of one start of a resident plan, per backend (docs/performance.md,
# issue 15): instructions and system calls inside MPI_Start / MPI_Enqueue_start
# (callgrind on rank 0, --toggle-collect=start_epoch, --collect-systime), or
# the mean ns per start without valgrind.
#   usage: bench/plan_start_cost.sh count|time [iterations] [filter regex]
# BUILD (default build) names the build whose bin/ runs; LD_LIBRARY_PATH
# may swap the library in (its RUNPATH yields to it). COUNT_FN=wait_done_epoch
# counts the wait of a done epoch (MPI_Wait / MPI_Queue_fence) instead.
# Rows: <backend> <collective> <form>; the filter matches "backend coll form".
set -u
mode=${1:-count}
iters=${2:-}
filter=${3:-.}
B=${BUILD:-build}/bin
out=${OUT_DIR:-/tmp/plan_start_cost.$$}
mkdir -p "$out"
fn=${COUNT_FN:-start_epoch}
export COUNT_FN=$fn
wrap="$out/wrap.sh"
cat >"$wrap" <<'WRAP'
#!/usr/bin/env bash
if [ "${NICQ_RANK:-0}" = 0 ]; then
  # Symbols bound at load: the first start's lazy binding is not the start's.
  LD_BIND_NOW=1 exec valgrind --tool=callgrind --collect-systime=usec --toggle-collect="$COUNT_FN" \
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
        cg="$out/cg.${name}.${coll}.${form}.${fn}"
        rm -f "$cg"
        env $envs CG_OUT="$cg" timeout 900 "$B/nicqrun" -n $ranks "$wrap" "$B/nicq_plan_host_cost" \
          "${args[@]}" >"$cg.log" 2>&1
        rc=$?
        # The inclusive costs of $fn (callgrind's system call counts are
        # not limited by --toggle-collect; its inclusive line is).
        line=$(callgrind_annotate --inclusive=yes "$cg" 2>/dev/null | grep ":$fn ")
        python3 - "$n" "$row" "$rc" "$line" <<'PY'
import re, sys
n, row, rc, line = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
# "Ir (pct) sysCount (pct) sysTime (pct) file:function"; "." where zero.
m = re.match(r"\s*([\d,]+|\.)\s*(?:\([^)]*\))?\s+([\d,]+|\.)\s*(?:\([^)]*\))?\s+([\d,]+|\.)", line)
vals = [0 if v == "." else int(v.replace(",", "")) for v in (m.groups() if m else ())]
vals += [0] * (3 - len(vals))
print(f"{row:40s} rc={rc} Ir/start={vals[0] / n:8.0f} "
      f"syscalls/start={vals[1] / n:6.2f} sys_us/start={vals[2] / n:8.2f}")
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
