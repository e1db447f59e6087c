#!/usr/bin/env bash
# Scaling study of the offloaded persistent allreduce plan on the NIC
# simulator: nicq_sim runs the plan on P simulated NICs (one process, data
# checked) for P = 2, 4, ..., 65536 and this script sets its predicted
# completion time against the LogGP lower bound of any allreduce:
#
#   T_lb(P, k) = ceil(log2 P) * (L + 2o + (k-1)G)
#
# (each rank must learn all P inputs; receiving one message per step at
# most doubles what a rank knows, and one step costs at least one
# end-to-end message). The bound ignores the NIC's trigger fire latency
# (nic_op), which every simulated hop pays, so the ratio never reaches 1.
#
# usage: bench/allreduce_scaling.sh [--algo nic_tree|recursive_doubling]
#          [--bytes K] [--config slingshot|infiniband] [--max-ranks P]
#          [--nicq-sim PATH]
# Output: one table on stdout (ranks, predicted us, LogGP bound us, ratio,
# messages per NIC per epoch, total messages, max trigger slots per NIC).
# nicq_sim is looked up in build/bin, then in any build-*/bin of the checkout.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
algo=nic_tree
bytes=8
config=slingshot
max_ranks=65536
sim=
while [[ $# -gt 0 ]]; do
  case $1 in
    --algo) algo=$2; shift 2 ;;
    --bytes) bytes=$2; shift 2 ;;
    --config) config=$2; shift 2 ;;
    --max-ranks) max_ranks=$2; shift 2 ;;
    --nicq-sim) sim=$2; shift 2 ;;
    -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
    *) echo "allreduce_scaling.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z $sim ]]; then
  for c in "$root"/build/bin/nicq_sim "$root"/build-*/bin/nicq_sim; do
    [[ -x $c ]] && { sim=$c; break; }
  done
fi
[[ -n $sim && -x $sim ]] || { echo "allreduce_scaling.sh: nicq_sim not built (ninja nicq_sim)" >&2; exit 1; }
conf=$root/firmware-sim/configs/$config.conf
[[ -f $conf ]] || conf=$config
[[ -f $conf ]] || { echo "allreduce_scaling.sh: no LogGP config $config" >&2; exit 1; }
param() { awk -F= -v k="$1" '{gsub(/[ \t]/, "", $1); gsub(/[ \t]/, "", $2)} $1 == k {print $2}' "$conf"; }
L=$(param L_ns)
o=$(param o_ns)
G=$(param G_ps_per_byte)

echo "# allreduce plan '$algo', $bytes bytes, network $config (L=${L} ns, o=${o} ns, G=${G} ps/B); $(date -u +%Y-%m-%dT%H:%MZ)"
printf "%8s %14s %14s %7s %14s %12s %7s\n" ranks predicted_us loggp_lb_us ratio msgs_per_nic msgs_total slots
for ((p = 2; p <= max_ranks; p *= 2)); do
  out=$("$sim" --algo "$algo" -n "$p" --bytes "$bytes" --config "$config")
  grep -q "data ok" <<<"$out" || { echo "allreduce_scaling.sh: $p ranks: data not ok" >&2; echo "$out" >&2; exit 1; }
  pred=$(sed -n 's/^epoch 0: predicted completion \([0-9.]*\) us.*/\1/p' <<<"$out")
  total=$(sed -n 's/^messages: \([0-9]*\) total, \([0-9.]*\) per NIC.*/\1/p' <<<"$out")
  per=$(sed -n 's/^messages: \([0-9]*\) total, \([0-9.]*\) per NIC.*/\2/p' <<<"$out")
  slots=$(sed -n 's/^trigger slots per NIC: max \([0-9]*\) in use.*/\1/p' <<<"$out")
  awk -v p="$p" -v pred="$pred" -v L="$L" -v o="$o" -v G="$G" -v k="$bytes" -v per="$per" \
      -v total="$total" -v slots="$slots" 'BEGIN {
    rounds = 0; for (x = 1; x < p; x *= 2) rounds++;
    lb = rounds * (L + 2 * o + (k - 1) * G / 1000.0) / 1000.0;
    printf "%8d %14.3f %14.3f %7.2f %14s %12s %7s\n", p, pred, lb, pred / lb, per, total, slots
  }'
done
