#!/usr/bin/env bash
# Starts a private one-node Slurm cluster (slurmctld + slurmd as root, no
# munge: auth/none, state in a scratch directory, its own ports), runs
# `srun --mpi=pmix -n N prog args...` so that Slurm's PMIx plugin is the
# server for nicq's PmixBootstrap, then stops the daemons it started.
# Exit 77 (ctest skip) when Slurm is not installed or we are not root.
# usage: run_pmix_slurm.sh N prog [args...]
set -u
n=$1; shift
prog=$1; shift
for b in slurmctld slurmd srun sinfo; do
  command -v "$b" >/dev/null || { echo "SKIP: $b not found (apt-get install slurmctld slurmd slurm-client)"; exit 77; }
done
[[ $(id -u) == 0 ]] || { echo "SKIP: a private slurmd must run as root"; exit 77; }
plugdir=$(dirname "$(find /usr/lib -name 'mpi_pmix*.so' 2>/dev/null | head -1)")
[[ $plugdir != . ]] || { echo "SKIP: Slurm's mpi_pmix plugin is not installed"; exit 77; }

dir=$(mktemp -d /tmp/nicq-slurm.XXXXXX)
host=$(hostname -s)
# Ports derived from our pid so that two runs on one machine do not collide.
port=$((20000 + ($$ % 20000) * 2))
ctld_pid= slurmd_pid=
cleanup() {
  [[ -n $slurmd_pid ]] && kill "$slurmd_pid" 2>/dev/null
  [[ -n $ctld_pid ]] && kill "$ctld_pid" 2>/dev/null
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/state" "$dir/spool"
cat > "$dir/slurm.conf" <<CONF
ClusterName=nicqtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/none
CredType=cred/none
SlurmUser=root
SlurmdUser=root
PluginDir=$plugdir
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=nicq Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:8
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -D -i >"$dir/slurmctld.out" 2>&1 &
ctld_pid=$!
slurmd -D -N "$host" >"$dir/slurmd.out" 2>&1 &
slurmd_pid=$!
show_logs() { for f in "$dir"/*.log "$dir"/*.out; do echo "== $f"; tail -20 "$f"; done; }

ready=
for _ in $(seq 120); do  # up to ~60 s for the node to register
  state=$(sinfo -h -N -o %t 2>/dev/null | head -1)
  if [[ $state == idle* ]]; then ready=1; break; fi
  kill -0 "$ctld_pid" 2>/dev/null && kill -0 "$slurmd_pid" 2>/dev/null || break
  sleep 0.5
done
if [[ -z $ready ]]; then
  echo "FAIL: the private Slurm cluster did not come up (node state '${state:-none}')"
  show_logs
  exit 1
fi
unset NICQ_RANK NICQ_SIZE NICQ_BOOT_DIR NICQ_LOCAL_RANK NICQ_LOCAL_SIZE
timeout 60 srun --mpi=pmix -n "$n" --overcommit -t 1 "$prog" "$@"
rc=$?
[[ $rc == 0 ]] || show_logs
exit $rc
