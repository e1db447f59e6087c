#!/usr/bin/env bash
# usage: expect_lines.sh [+regex | !regex | =N:regex]... -- command...
# Runs the command, prints its output, and fails unless it exits with
# status 0, every +regex (extended) matches at least one line of its
# combined output, no !regex matches any and each =N:regex matches exactly
# N lines. Line by line (grep), so long outputs such as plan dumps stay
# cheap to check.
set -u
want=() never=() counted=()
while [[ $# -gt 0 && $1 != -- ]]; do
  case $1 in
    +*) want+=("${1:1}") ;;
    !*) never+=("${1:1}") ;;
    =[0-9]*:*) counted+=("${1:1}") ;;
    *) echo "expect_lines.sh: '$1' is neither +regex, !regex nor =N:regex"; exit 2 ;;
  esac
  shift
done
shift  # --
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if [[ $rc != 0 ]]; then
  echo "FAIL: exit status $rc: $*"
  exit 1
fi
for r in "${want[@]}"; do
  if ! printf '%s\n' "$out" | grep -Eq -- "$r"; then
    echo "FAIL: no line matches /$r/"
    exit 1
  fi
done
for r in "${never[@]}"; do
  if printf '%s\n' "$out" | grep -Eq -- "$r"; then
    echo "FAIL: a line matches /$r/: $(printf '%s\n' "$out" | grep -Em1 -- "$r")"
    exit 1
  fi
done
for c in "${counted[@]}"; do
  n=${c%%:*} r=${c#*:}
  got=$(printf '%s\n' "$out" | grep -Ec -- "$r")
  if [[ $got != "$n" ]]; then
    echo "FAIL: $got lines match /$r/, want $n"
    exit 1
  fi
done
echo "PASS"
