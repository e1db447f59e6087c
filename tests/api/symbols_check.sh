#!/bin/sh
# Every C function of the MPI 4.1 standard (tests/api/mpi41_functions.txt)
# must be declared by mpi.h and exported by libnicq, under its MPI_ and its
# PMPI_ name (MPI-4.1 15.2): a generated C program takes the address of
# each (an undeclared name is a compile error, a missing symbol a link
# error), and `nm -D` must list each as defined, every exported MPI_
# function's PMPI_ name at the same address.
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

# Each exported MPI_ function (the list's and nicq's own: MPI_T_*, the queue
# calls) and its PMPI_ name: one address.
nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" {print $3, $1}' | sort > "$work/addresses.txt"
unaliased=$(awk '{ addr[$1] = $2 }
  END { for (n in addr) if (n ~ /^MPI_/) {
          p = "P" n
          if (!(p in addr)) print n ": no " p
          else if (addr[p] != addr[n]) print n " at " addr[n] ", " p " at " addr[p] } }' \
  "$work/addresses.txt" | sort)
if [ -n "$unaliased" ]; then
  echo "FAIL: PMPI_ names missing or elsewhere in $lib:"; echo "$unaliased"; exit 1
fi
functions=$(grep -c '^MPI_' "$work/addresses.txt")

# The library's own calls of its exported functions use the PMPI_ names
# (15.2's advice to implementors), so a tool's MPI_ definitions see only the
# program's calls: no call or jump through an MPI_ name's PLT entry, nor
# through the GOT slot the dynamic linker fills with an MPI_ name's address
# (what a call compiles to under -fno-plt: `call *slot(%rip)`). objdump
# names such a slot only by the nearest symbol (`# 3fc0 <MPI_Foo+0x2ec0>`),
# so the slot addresses come from the library's GLOB_DAT relocations
# (objdump -R). Loads of a slot are no calls: the predefined attribute
# callbacks' addresses are compared that way (MPI_TYPE_NULL_DELETE_FN).
if command -v objdump > /dev/null; then
  objdump -d --no-show-raw-insn "$lib" > "$work/disassembly.txt" || exit 1
  objdump -R "$lib" | awk '$2 ~ /GLOB_DAT/ && $3 ~ /^MPI_/ {
      a = $1; sub(/^0+/, "", a); n = $3; sub(/@.*/, "", n); print a, n }' > "$work/got_mpi.txt"
  internal=$({
    grep -E '(call|jmp) .*<MPI_[A-Za-z0-9_]*@plt>' "$work/disassembly.txt" |
      sed 's/.*<\(MPI_[A-Za-z0-9_]*\)@plt>.*/\1 (PLT)/'
    awk 'NR == FNR { slot[$1] = $2; next }
      /(call|jmp) +\*(0x[0-9a-f]+)?\(%rip\)/ && match($0, /# [0-9a-f]+ /) {
        a = substr($0, RSTART + 2, RLENGTH - 3); sub(/^0+/, "", a)
        if (a in slot) print slot[a] " (GOT)" }' "$work/got_mpi.txt" "$work/disassembly.txt"
  } | sort | uniq -c)
  if [ -n "$internal" ]; then
    echo "FAIL: $lib calls these by their MPI_ names (call the PMPI_ name):"; echo "$internal"; exit 1
  fi
fi

src=$work/all_functions.c
{
  echo '#include <mpi.h>'
  echo '#include <stdio.h>'
  echo 'typedef void (*fn)(void);'
  echo 'static fn table[] = {'
  sed 's/.*/  (fn)&, (fn)P&,/' "$names"
  echo '};'
  echo 'static const char* names[] = {'
  sed 's/.*/  "&", "P&",/' "$names"
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
want="$((count * 2)) functions"
[ "$out" = "$want" ] || { echo "FAIL: program printed '$out', want '$want'"; exit 1; }
echo "ok: $count MPI functions declared and exported with their PMPI_ names;" \
  "$functions exported MPI_ functions, each with its PMPI_ name at its address"
