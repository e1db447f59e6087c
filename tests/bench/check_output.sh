#!/bin/sh
# Runs one benchmark and checks its output (ctest label `bench`).
#
# usage: check_output.sh COLUMNS MIN_ROWS command [args...]
#
# Passes when the command exits 0, prints no "# ERROR" line (the
# benchmarks' own data checks), prints its column header ("# Size ..."),
# and every result row (a line not starting with '#') has COLUMNS numeric
# fields, at least MIN_ROWS of them. MIN_ROWS 0 admits a form nicq refuses
# at some sizes: then the run must say where it stopped ("... stops at
# size N: reason") if it printed fewer rows than sizes. Timings are printed,
# never checked.
set -u
columns=$1
min_rows=$2
shift 2
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() {
  echo "check_output: $*" >&2
  exit 1
}
[ "$rc" -eq 0 ] || fail "exit status $rc"
if printf '%s\n' "$out" | grep -q '^# ERROR'; then fail "a data check failed"; fi
printf '%s\n' "$out" | grep -q '^# Size' || fail "no '# Size' column header"
bad=$(printf '%s\n' "$out" | awk -v n="$columns" '
  /^#/ || /^nicq/ || NF == 0 { next }
  {
    if (NF != n) { print "row with " NF " fields, expected " n ": " $0; exit }
    for (i = 1; i <= NF; ++i)
      if ($i !~ /^-?[0-9]+(\.[0-9]+)?$/) { print "not a number: " $i " in: " $0; exit }
  }')
[ -z "$bad" ] || fail "$bad"
rows=$(printf '%s\n' "$out" | awk '!/^#/ && !/^nicq/ && NF > 0' | wc -l)
[ "$rows" -ge "$min_rows" ] || fail "$rows result rows, expected at least $min_rows"
if [ "$rows" -eq 0 ]; then
  printf '%s\n' "$out" | grep -q 'stops at size' || fail "no result rows and no reason"
fi
echo "check_output: $rows rows of $columns columns, data checks passed"
