#!/usr/bin/env bash
# Regenerates the environment-variable section of docs/user-guide.md and
# docs/cluster.md from `nicq_info -e` (itself generated from
# src/core/config.def), between the BEGIN/END markers.
# usage: scripts/gen-env-doc.sh [build-dir]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
info=${1:-$root/build}/bin/nicq_info
[[ -x $info ]] || { echo "build nicq_info first ($info)"; exit 1; }
table=$(mktemp)
trap 'rm -f "$table"' EXIT
{
  echo "| variable | type | default | meaning |"
  echo "|---|---|---|---|"
  # nicq_info -e prints "NAME (Type, default D)" then an indented help line.
  env -u NICQ_PROVIDER "$info" -e | awk '
    /^#/ { next }
    /^NICQ_/ { name = $1; line = $0; sub(/^[^(]*\(/, "", line); sub(/\).*$/, "", line)
               split(line, a, ", default "); type = a[1]; def = a[2]; next }
    /^    / { help = $0; sub(/^ +/, "", help); gsub(/\|/, "\\|", help)
              printf "| `%s` | %s | `%s` | %s |\n", name, type, def, help }'
} >"$table"
for doc in "$root/docs/user-guide.md" "$root/docs/cluster.md"; do
  [[ -f $doc ]] || continue
  awk -v table="$table" '
    /<!-- BEGIN nicq_info -e -->/ { print; while ((getline l < table) > 0) print l; skip = 1; next }
    /<!-- END nicq_info -e -->/ { skip = 0 }
    !skip { print }' "$doc" >"$doc.new"
  mv "$doc.new" "$doc"
  echo "updated $doc"
done
