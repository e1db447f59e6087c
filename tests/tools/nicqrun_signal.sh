#!/usr/bin/env bash
# Ctrl-C reaches nicqrun only (ranks run in their own process groups):
# nicqrun must forward it, exit 130 and leave no rank behind.
set -u
nicqrun=$1 prog=$2
"$nicqrun" -n 3 "$prog" hang &
pid=$!
# Wait (bounded) until all three ranks exist, so the signal hits a running job.
for _ in $(seq 100); do
  (( $(pgrep -c -P "$pid" || true) >= 3 )) && break
  sleep 0.1
done
children=$(pgrep -P "$pid" | tr '\n' ' ')
kill -INT "$pid"
wait "$pid"
rc=$?
[[ $rc == 130 ]] || { echo "FAIL: nicqrun exited $rc after SIGINT, expected 130"; exit 1; }
for c in $children; do
  if kill -0 "$c" 2>/dev/null; then echo "FAIL: rank pid $c survived"; exit 1; fi
done
echo PASS
