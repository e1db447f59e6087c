#!/usr/bin/env python3
"""Instructions per iteration in and outside progress passes, from callgrind files.

A rank's waits poll as often as timing makes them (a rank slowed by callgrind
polls for its faster peer), so a collected total mixes deterministic work
with a number of progress passes that changes from run to run. This splits
the total: "passes" is the inclusive cost of every call to rt::ProgressWait,
rt::Progress and rt::PollEngine (Open MPI: opal_progress; MPICH over UCX:
ucp_worker_progress) made from outside them (and the backend poll
an enqueued wait makes itself); the rest is the work outside the passes.

usage: callgrind_passes.py ITERATIONS callgrind.out...   (docs/performance.md)
"""
import re
import sys

PASSES = ("nicq::rt::ProgressWait(", "nicq::rt::Progress(", "nicq::rt::PollEngine(",
          # the same for the other libraries' builds of the benches
          "opal_progress", "ucp_worker_progress")
WAIT_BACKEND_POLL = ("Queue::HostEnqueueWaitAll(", "::Progress()")


def split(path):
    names, fn, cfn, calls = {}, "", "", None
    total = passes = 0

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
            cost = int(parts[1]) if len(parts) > 1 else 0
            outer = not any(p in fn for p in PASSES)
            if outer and any(p in cfn for p in PASSES):
                passes += cost
            elif WAIT_BACKEND_POLL[0] in fn and cfn.endswith(WAIT_BACKEND_POLL[1]):
                passes += cost
            calls = None
    return total, passes


def main():
    iters = float(sys.argv[1])
    for path in sys.argv[2:]:
        total, passes = split(path)
        print(f"{path}: total {total / iters:.0f}, in passes {passes / iters:.0f}, "
              f"outside {(total - passes) / iters:.0f} per iteration")


if __name__ == "__main__":
    main()
