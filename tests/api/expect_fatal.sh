#!/bin/sh
# usage: expect_fatal.sh NICQRUN RANKS PROGRAM EXPECTED_TEXT
# Passes when the job exits nonzero and its output holds EXPECTED_TEXT (the
# error message of an MPI_ERRORS_ARE_FATAL abort). nicqrun's --timeout makes
# a hang a failure too (exit 124 with no message).
nicqrun=$1 ranks=$2 prog=$3 text=$4
out=$("$nicqrun" -n "$ranks" --timeout 60 "$prog" 2>&1)
rc=$?
printf '%s\n' "$out"
if [ "$rc" -eq 0 ]; then
  echo "expect_fatal: job exited 0; expected an abort" >&2
  exit 1
fi
# The program's own line when the fatal call returned (its exit without
# MPI_Finalize makes the job fail too, so the status alone cannot tell).
case $out in
  *"returned under MPI_ERRORS_ARE_FATAL"*)
    echo "expect_fatal: the call returned instead of aborting" >&2
    exit 1 ;;
esac
case $out in
  *"$text"*) echo "expect_fatal: aborted with status $rc and the expected message" ;;
  *) echo "expect_fatal: output lacks \"$text\"" >&2; exit 1 ;;
esac
