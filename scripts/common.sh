# Shared by setup.sh and test.sh: package installation and quiet builds.
# Sourced, not run. Every step logs to build-logs/ and shows the log's tail
# only when the step fails, so a good run prints a handful of lines.

NICQ_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
NICQ_LOGS=$NICQ_ROOT/build-logs
mkdir -p "$NICQ_LOGS"

# What building and running nicq needs on Debian 12.
NICQ_BUILD_PACKAGES=(g++ cmake ninja-build pkg-config binutils libfabric-dev libfabric-bin
                     libpmix-dev libhwloc-dev googletest libgtest-dev openmpi-bin procps)
# What the full test suite adds: Slurm for the srun --mpi=pmix test, ccache
# so that a rerun of test.sh on the same machine recompiles only what changed.
NICQ_TEST_PACKAGES=(slurmd slurmctld slurm-client ccache)

note() { printf '== %s\n' "$*"; }

# run_logged <log-name> <description> command...: run quietly, show the log on failure.
run_logged() {
  local log=$NICQ_LOGS/$1.log desc=$2
  shift 2
  if ! "$@" >"$log" 2>&1; then
    echo "FAILED: $desc (last 60 lines of $log):"
    tail -n 60 "$log"
    return 1
  fi
}

# install_packages pkg...: apt-get only what is missing; nothing when all are there.
install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]} == 0)) && return 0
  local sudo=
  if [[ $(id -u) != 0 ]]; then
    command -v sudo >/dev/null || { echo "need root (or sudo) to install: ${missing[*]}"; return 1; }
    sudo=sudo
  fi
  note "installing ${missing[*]} (log: build-logs/apt.log)"
  export DEBIAN_FRONTEND=noninteractive
  run_logged apt "apt-get update" $sudo apt-get update -q || return 1
  run_logged apt-install "apt-get install" \
    $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# build <dir> <description> [cmake args...]: configure (once) and build
# everything, or only the ninja targets in NICQ_BUILD_TARGETS when set.
build() {
  local dir=$1 desc=$2
  shift 2
  local name targets=()
  name=$(basename "$dir")
  read -r -a targets <<<"${NICQ_BUILD_TARGETS:-}"
  note "building $desc in $(realpath --relative-to="$NICQ_ROOT" "$dir")"
  local launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  run_logged "$name-configure" "cmake configure ($desc)" \
    cmake -S "$NICQ_ROOT" -B "$dir" -G Ninja "${launcher[@]}" "$@" || return 1
  run_logged "$name-build" "build ($desc)" ninja -C "$dir" -j "$(nproc)" "${targets[@]}"
}
