#!/usr/bin/env python3
"""Instructions per iteration in and outside progress passes, from callgrind files.

A rank's waits poll as often as timing makes them (a rank slowed by callgrind
polls for its faster peer), so a collected total mixes deterministic work
with a number of progress passes that changes from run to run. This splits
the total: "passes" is the inclusive cost of every call to rt::ProgressWait,
rt::Progress and rt::PollEngine made from outside them (and the backend poll
an enqueued wait makes itself; for another library built from the same
source, of opal_progress, ucp_worker_progress or MPID_Progress_test/wait);
the rest is the work outside the passes.

usage: callgrind_passes.py ITERATIONS callgrind.out...   (docs/performance.md)
ITERATIONS may be calls:NAME: per call of the function NAME (e.g.
calls:MPI_Testall, PMPI_Testall for Open MPI), the calls counted in each file.
"""
import re
import sys

PASSES = ("nicq::rt::ProgressWait(", "nicq::rt::Progress(", "nicq::rt::PollEngine(")
# The other libraries' progress engines, for the same split of a bench
# source built against them: C names, matched whole.
OTHER_PASSES = ("opal_progress", "ucp_worker_progress", "MPID_Progress_test", "MPID_Progress_wait")
WAIT_BACKEND_POLL = ("Queue::HostEnqueueWaitAll(", "::Progress()")


def split(path, count_name=None):
    names, fn, cfn, calls = {}, "", "", None
    total = passes = ncalls = 0

    def is_pass(f):
        return any(p in f for p in PASSES) or f.split("'")[0] in OTHER_PASSES

    def name(token):
        m = re.match(r"\((\d+)\)(?: (.*))?", token)
        if not m:
            return token
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "?")

    for line in open(path):
        if line.startswith("fn="):
            fn = name(line[3:].strip())
        elif line.startswith("cfn="):
            cfn = name(line[4:].strip())
        elif line.startswith("calls="):
            calls = line
        elif line.startswith(("summary:", "totals:")):
            total = int(line.split()[1])
        elif calls and (line[:1].isdigit() or line[:1] in "+-*"):
            parts = line.split()
            if count_name and cfn.split("'")[0] == count_name:
                ncalls += int(calls.split()[0][len("calls="):])
            cost = int(parts[1]) if len(parts) > 1 else 0
            outer = not is_pass(fn)
            if outer and is_pass(cfn):
                passes += cost
            elif WAIT_BACKEND_POLL[0] in fn and cfn.endswith(WAIT_BACKEND_POLL[1]):
                passes += cost
            calls = None
    return total, passes, ncalls


def main():
    per = sys.argv[1]
    name = per[len("calls:"):] if per.startswith("calls:") else None
    for path in sys.argv[2:]:
        total, passes, ncalls = split(path, name)
        n = float(ncalls if name else per)
        unit = f"call of {name} ({ncalls} calls)" if name else "iteration"
        if n == 0:
            print(f"{path}: no calls of {name}")
            continue
        print(f"{path}: total {total / n:.0f}, in passes {passes / n:.0f}, "
              f"outside {(total - passes) / n:.0f} per {unit}")


if __name__ == "__main__":
    main()
