#!/bin/sh
# Every C function of the MPI 4.1 standard (tests/api/mpi41_functions.txt)
# must be declared by mpi.h and exported by libnicq: a generated C program
# takes the address of each one (an undeclared name is a compile error, a
# missing symbol a link error), and `nm -D` must list each one as defined.
# Usage: symbols_check.sh LIST MPICC LIBNICQ WORKDIR
set -u
list=$1 mpicc=$2 lib=$3 work=$4
mkdir -p "$work" || exit 1
names=$work/names.txt
grep -v '^#' "$list" | grep . > "$names" || exit 1
count=$(wc -l < "$names")
[ "$count" -gt 400 ] || { echo "FAIL: only $count names in $list"; exit 1; }

nm -D --defined-only "$lib" | awk '{print $3}' | grep '^MPI_' | sort -u > "$work/exported.txt"
missing=$(sort -u "$names" | comm -23 - "$work/exported.txt")
if [ -n "$missing" ]; then
  echo "FAIL: not exported by $lib:"; echo "$missing"; exit 1
fi

src=$work/all_functions.c
{
  echo '#include <mpi.h>'
  echo '#include <stdio.h>'
  echo 'typedef void (*fn)(void);'
  echo 'static fn table[] = {'
  sed 's/.*/  (fn)&, /' "$names"
  echo '};'
  echo 'static const char* names[] = {'
  sed 's/.*/  "&",/' "$names"
  echo '};'
  echo 'int main(void) {'
  echo '  int n = (int)(sizeof table / sizeof table[0]), bad = 0, i;'
  echo '  for (i = 0; i < n; ++i)'
  printf '%s\n' '    if (!table[i]) { printf("null address: %s\n", names[i]); bad = 1; }'
  printf '%s\n' '  printf("%d functions\n", n);'
  echo '  return bad;'
  echo '}'
} > "$src"
"$mpicc" -std=c11 -Werror=implicit-function-declaration -o "$work/all_functions" "$src" ||
  { echo "FAIL: mpi.h does not declare, or libnicq does not define, every function"; exit 1; }
out=$("$work/all_functions") || { echo "FAIL: $out"; exit 1; }
[ "$out" = "$count functions" ] || { echo "FAIL: program printed '$out', want '$count functions'"; exit 1; }
echo "ok: $count MPI functions declared and exported"
