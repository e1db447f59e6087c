#!/usr/bin/env bash
# The whole test suite: install what is missing (Debian 12), then
#   1. normal build (build/)              ctest: every test
#   2. ASan+UBSan build (build-asan/)     ctest: every test except labels `slow`,
#      `packaging` (an installed sanitized library cannot serve uninstrumented consumers)
#      and the multi-process reruns on the provider personas (`cxi_persona`,
#      `verbs_persona`: the same nicq code as the sockets and tcp;ofi_rxm runs;
#      the personas' own rule tests stay in), and the plain `tcp` column (the
#      same nicq code as its tcp;ofi_rxm and sockets columns; keeps the suite
#      within CI's time), the 5-rank runs, the 3- and 4-rank sockets runs, the
#      4-rank tcp;ofi_rxm runs, the 1,000-rank simulations, the refused
#      intercommunicator beyond 2 ranks (each run waits out its timeout) and
#      the benchmarks' native half (NICQ_ASAN_EXCLUDE: the plan builders and
#      trees with interior ranks run at 3-4 ranks on shm and at 3 on
#      tcp;ofi_rxm, the native backend's post path at 2 ranks on sockets (the
#      mp tests there run the benchmarks' calls too), the simulator at 64
#      ranks; the normal phase runs them all)
#   3. TSan build (build-tsan/) of what the `tsan` tests run   ctest: tests labelled `tsan`
# Every phase runs even if an earlier one failed; the exit status is nonzero
# when any did. ctest's own summary lines are printed for each phase.
# NICQ_TEST_PHASES="normal asan tsan" selects phases; NICQ_CTEST_ARGS adds
# ctest arguments (e.g. "-R boot"); NICQ_CTEST_JOBS runs that many tests at
# once (default 2, CI's cores; the longest tests carry a COST so that they
# start first, cmake/NicqTesting.cmake).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$NICQ_ROOT"

install_packages "${NICQ_BUILD_PACKAGES[@]}" "${NICQ_TEST_PACKAGES[@]}" || exit 1

phases=${NICQ_TEST_PHASES:-normal asan tsan}
# Left out of the ASan phase only (see above); overridable for a full ASan run.
NICQ_ASAN_EXCLUDE=${NICQ_ASAN_EXCLUDE:-'\.n5$|\.sockets\.n[34]$|\.tcp\+ofi_rxm\.n4$|ScaleSim\..*/1000$|^mp\.api_intercomm_refused\..*\.n[34]$|^bench\..*\.native\.n2$'}
read -r -a extra <<<"${NICQ_CTEST_ARGS:-}"
# Sanitizer reports must fail the test that triggered them; leaks inside the
# system's libfabric/PMIx/hwloc are theirs, not ours.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$NICQ_ROOT/scripts/lsan.supp:print_suppressions=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$NICQ_ROOT/scripts/tsan.supp}

failed=()
start=$SECONDS
run_ctest() {  # <build dir> <phase name> ctest-args...
  local dir=$1 name=$2
  shift 2
  note "ctest ($name): $*"
  local out=$NICQ_LOGS/ctest-$name.log
  # Full output to the log; failures' output and the summary on the terminal.
  # Two jobs match the 2-core machines CI uses. A multi-process test that
  # fails is run once more: on a shared 2-core box a rank can be starved
  # past a timeout; a real bug fails both runs (the first failure stays in
  # the log).
  ctest --test-dir "$dir" --output-on-failure --timeout 300 -j "${NICQ_CTEST_JOBS:-2}" \
    --repeat until-pass:2 \
    "$@" "${extra[@]}" 2>&1 |
    tee "$out" | grep -Ev '^ *(Start +[0-9]+:|[0-9]+/[0-9]+ Test +#[0-9]+: .*(Passed|Skipped) )'
  local rc=${PIPESTATUS[0]}
  ((rc == 0)) || failed+=("$name")
}

for phase in $phases; do
  case $phase in
    normal)
      build "$NICQ_ROOT/build" "normal build" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
        run_ctest "$NICQ_ROOT/build" normal || failed+=("normal (build)") ;;
    asan)
      # Debug keeps the assertions; -O1 is the optimisation the sanitizers'
      # own documentation suggests, and runs the tests far faster than -O0.
      build "$NICQ_ROOT/build-asan" "ASan+UBSan build" -DCMAKE_BUILD_TYPE=Debug \
        "-DCMAKE_C_FLAGS_DEBUG=-g -O1" "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1" \
        "-DNICQ_SANITIZE=address;undefined" &&
        run_ctest "$NICQ_ROOT/build-asan" asan -LE "slow|packaging|cxi_persona|verbs_persona|^tcp$" \
          -E "${NICQ_ASAN_EXCLUDE}" || failed+=("asan (build)") ;;
    tsan)
      # Only what the `tsan` tests run is built (target nicq_tsan_programs):
      # a few programs over the whole library, where a sanitized build of
      # every test would double the phase's time on CI's two cores.
      NICQ_BUILD_TARGETS=nicq_tsan_programs build "$NICQ_ROOT/build-tsan" "TSan build" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNICQ_SANITIZE=thread &&
        run_ctest "$NICQ_ROOT/build-tsan" tsan -L tsan || failed+=("tsan (build)") ;;
    *) echo "unknown phase $phase"; failed+=("$phase") ;;
  esac
done

note "test.sh finished in $((SECONDS - start)) s (logs in build-logs/)"
if ((${#failed[@]})); then
  echo "FAILED phases: ${failed[*]}"
  exit 1
fi
echo "all phases passed: $phases"
