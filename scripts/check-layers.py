#!/usr/bin/env python3
"""Checks that each layer of nicq includes only the layers below it.

The layers (docs/DESIGN: core, boot, dtype, transport, p2p, runtime, then
queue, coll, rma, api above them; offload and providers beside them) are
static libraries that share one include root, so the compiler would accept
any include; this check is what keeps src/coll, src/queue and src/rma plain
clients of the offload interface, never of a concrete backend. Exit status 1
and one line per violation: "file:line: includes X, which layer L may not
use".

It also keeps op building in offload/algorithms/: src/coll, src/queue and
src/rma work out what MPI's arguments mean and call builders there; a line
of theirs that names an OpKind, fills a TriggeredOp or adds a step to an
offload::Schedule is refused ("file:line: builds ops ...").
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Directory prefix -> include prefixes it may use (its own always allowed).
# The first matching (longest) prefix applies.
RULES = {
    "src/core": ["core/"],
    "src/boot": ["core/"],
    "src/dtype": ["core/"],
    "src/transport": ["core/", "boot/"],
    "src/p2p": ["core/", "transport/", "runtime/comm.h", "runtime/request.h"],
    # The offload context (runtime/offload_context.*, offload_select.*) is the
    # one place that names the concrete backends it registers and opens.
    "src/runtime": ["core/", "boot/", "transport/", "p2p/", "dtype/", "providers/backend.h",
                    "providers/common/", "providers/ofi_common/register_ofi.h",
                    "providers/shm_native/shm_backend.h"],
    "src/queue": ["core/", "boot/", "runtime/", "offload/", "providers/backend.h"],
    "src/coll": ["core/", "dtype/", "runtime/", "queue/", "offload/", "providers/backend.h"],
    "src/rma": ["core/", "dtype/", "runtime/", "queue/", "offload/", "providers/backend.h"],
    "src/io": ["core/", "dtype/"],
    "src/api": ["core/", "dtype/", "runtime/", "queue/", "coll/", "rma/", "io/", "api/"],
    "offload/tool": ["core/", "offload/", "providers/"],
    "offload/bench": ["core/", "offload/", "providers/"],
    "offload": ["core/", "offload/", "providers/backend.h"],
    "providers/backend.h": ["core/"],
    "providers/common": ["core/", "providers/backend.h"],
    "providers/ofi_common": ["core/", "providers/"],
    "providers/ofi_native": ["core/", "providers/backend.h", "providers/common/",
                             "providers/ofi_common/"],
    "providers/ofi_emulated": ["core/", "providers/backend.h", "providers/common/",
                               "providers/ofi_common/"],
    "providers/sim": ["core/", "providers/backend.h", "providers/common/"],
    "providers/shm_native": ["core/", "providers/backend.h", "providers/common/"],
    "providers/persona": [],
}
# Top-level include roots that name a layer; anything else (system headers,
# "mpi.h", gtest) is not checked.
LAYER_ROOTS = ("core/", "boot/", "dtype/", "transport/", "p2p/", "runtime/", "queue/",
               "coll/", "rma/", "io/", "api/", "offload/", "providers/")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')

# Layers that hand plain descriptions to offload/algorithms/ instead of
# building ops themselves.
CLIENT_LAYERS = ("src/coll", "src/queue", "src/rma")
# An op kind, a TriggeredOp filled field by field (a declared or braced
# one; arrays of them as storage builders fill are fine), or a step added to
# an offload::Schedule (its step methods; Schedule::AddCounter takes a name).
BUILDS_OPS = re.compile(
    r"OpKind::|TriggeredOp\s*\{|TriggeredOp\s+\w+\s*[;=({]"
    r"|(->|\.)(Send|Recv|Put|Atomic|RemoteCounterAdd|CounterAdd|Reduce|Copy|Host|Nop|WaitOn|"
    r"ExposeBuffer|SetCompletionIncrement)\("
    r"|(->|\.)AddCounter\(\s*\"")
# Schedule step calls share their names with the host schedule's
# (coll/schedule.h: s.Send, s.Recv, s.Copy, s.Reduce); a file is checked for
# those only when it names offload::Schedule or offload::StepId.
OFFLOAD_SCHEDULE = re.compile(r"offload::(Schedule|StepId)\b|using offload::StepId")
HOST_SCHEDULE_NAMES = re.compile(r"(->|\.)(Send|Recv|Copy|Reduce)\(")
# Files of those layers that may still build ops, each with its reason
# (none today: every builder lives in offload/algorithms/).
BUILDERS_NOT_MOVED = {}


def rule_for(rel):
    best = None
    for prefix in RULES:
        if rel == prefix or rel.startswith(prefix + "/"):
            if best is None or len(prefix) > len(best):
                best = prefix
    return best


def own_root(prefix):
    # "src/coll" -> "coll/", "providers/ofi_native" -> "providers/ofi_native/"
    return prefix[4:] + "/" if prefix.startswith("src/") else prefix + "/"


def main():
    bad = []
    for top in ("src", "offload", "providers"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".h", ".cc", ".c")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                prefix = rule_for(rel)
                if prefix is None:
                    continue
                allowed = RULES[prefix] + [own_root(prefix)]
                with open(path, encoding="utf-8", errors="replace") as f:
                    for n, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        inc = m.group(1)
                        if not inc.startswith(LAYER_ROOTS):
                            continue
                        if any(inc == a or inc.startswith(a) for a in allowed):
                            continue
                        bad.append(f"{rel}:{n}: includes {inc}, which layer {prefix} may not use")
    builds = op_builders_outside_algorithms()
    for line in bad + builds:
        print(line)
    if bad:
        print(f"{len(bad)} include(s) cross the layers (scripts/check-layers.py, RULES)")
    if builds:
        print(f"{len(builds)} line(s) build ops outside offload/algorithms/ "
              "(scripts/check-layers.py, BUILDS_OPS)")
    if bad or builds:
        return 1
    print("layers: every include is allowed; src/coll, src/queue and src/rma build no ops")
    return 0


def op_builders_outside_algorithms():
    found = []
    for layer in CLIENT_LAYERS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, layer)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc", ".c")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, ROOT)
                if rel in BUILDERS_NOT_MOVED:
                    continue
                with open(path, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                offload_schedule = OFFLOAD_SCHEDULE.search(text) is not None
                for n, line in enumerate(text.splitlines(), 1):
                    code = line.split("//", 1)[0]
                    m = BUILDS_OPS.search(code)
                    if m and not offload_schedule and HOST_SCHEDULE_NAMES.match(m.group(0)):
                        m = None
                    if m:
                        found.append(f"{rel}:{n}: builds ops ({m.group(0).strip()}); "
                                     "offload/algorithms/ builds them")
    return found


if __name__ == "__main__":
    sys.exit(main())
