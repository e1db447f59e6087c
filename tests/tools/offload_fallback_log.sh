#!/usr/bin/env bash
# usage: offload_fallback_log.sh <nicqrun> <ranks> <ok-regex> <program> [args...]
# Runs the program at NICQ_LOG=info with the environment ctest gives it (an
# offload backend made to refuse) and checks, besides the program's own
# success line, that every rank logged the offload fallback exactly once and
# no rank logged it twice: the line names the provider, the capability and
# the backend used instead (docs/offload-backends.md, "When offload cannot
# open").
set -u
run=$1 ranks=$2 ok=$3; shift 3
line='info offload: native backend unavailable on provider sockets: trigger slots: [0-9]+ .*; using emulated$'
out=$(NICQ_LOG=info "$run" -n "$ranks" --timeout 100 "$@" 2>&1)
rc=$?
printf '%s\n' "$out" | grep -E "offload|OK|error|fatal"
fail() { echo "FAIL: $*"; exit 1; }
[[ $rc == 0 ]] || fail "exit status $rc"
printf '%s\n' "$out" | grep -Eq -- "$ok" || fail "no line matching /$ok/"
for ((r = 0; r < ranks; ++r)); do
  n=$(printf '%s\n' "$out" | grep -Ec -- "^nicq\[$r\] $line")
  [[ $n == 1 ]] || fail "rank $r logged the fallback $n times, expected once"
done
total=$(printf '%s\n' "$out" | grep -Ec -- "offload: .*backend unavailable")
[[ $total == "$ranks" ]] || fail "$total fallback lines for $ranks ranks"
echo PASS
