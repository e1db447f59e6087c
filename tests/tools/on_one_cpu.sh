#!/usr/bin/env bash
# usage: on_one_cpu.sh command...
# Runs the command on the first CPU this process may use, so that two or
# more ranks oversubscribe it on any machine.
set -eu
cpus=$(taskset -pc $$)
cpus=${cpus##*: }
exec taskset -c "${cpus%%[-,]*}" "$@"
