#!/usr/bin/env bash
# usage: expect_run.sh <expected-exit-status> <extended-regex|-> [min-matches] -- command...
# Runs the command, prints its output, and fails unless it exits with the
# expected status and its combined output matches the regex (at least
# min-matches lines, default 1).
set -u
want_rc=$1 regex=$2; shift 2
min=1
if [[ $1 != -- ]]; then min=$1; shift; fi
shift  # --
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc != "$want_rc" ]]; then
  echo "FAIL: exit status $rc, expected $want_rc: $*"
  exit 1
fi
if [[ $regex != - ]]; then
  got=$(printf '%s\n' "$out" | grep -Ec -- "$regex")
  if (( got < min )); then
    echo "FAIL: output has $got lines matching /$regex/, expected at least $min"
    exit 1
  fi
fi
echo "PASS"
