#!/usr/bin/env python3
"""The benchmark suite side by side: nicq (per provider) and every other MPI
found (Debian's MPICH and Open MPI), the same benchmark sources, the same
rank counts, run in alternation and repeated; medians go to one CSV and one
PNG plot (gnuplot) per benchmark, and a markdown table with ratios
nicq/other to results.md. Python standard library only.

usage: compare.py --nicq-bin DIR --out DIR [--quick] [--reps N]
                  [--providers "shm,tcp;ofi_rxm,shm@thread"] [--coll-ranks 2,4]
                  [--only REGEX] [--timeout S] [--replot]
A provider written "name@thread" runs with NICQ_PROGRESS_THREAD=1;
sockets runs with NICQ_OFFLOAD=native. The first provider is the one the
ratio columns use. --quick: sizes to 64 KiB (point-to-point) and 1 MiB
(collectives), few iterations.
Called by bench/compare.sh, which installs the packages and checks the
nicq build; see docs/performance.md.
"""
import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = ["nicq_latency", "nicq_bw", "nicq_bibw", "nicq_latency_persistent",
           "nicq_latency_queued", "nicq_ring_queued", "nicq_allreduce", "nicq_bcast",
           "nicq_barrier", "nicq_neighbor", "nicq_onesided", "nicq_completion"]
# nicq_completion's forms: one output line each (parse()).
COMPLETION_FORMS = ["waitall", "testall", "waitany", "waitsome", "test"]
OTHER_MPIS = {  # name: (compiler wrapper, launcher prefix, extra environment)
    "mpich": ("mpicc.mpich", ["mpiexec.mpich"], {}),
    "openmpi": ("mpicc.openmpi", ["mpirun.openmpi", "--oversubscribe"],
                {"OMPI_MCA_btl": "self,vader", "OMPI_ALLOW_RUN_AS_ROOT": "1",
                 "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}),
}


def benchmarks(quick, coll_ranks):
    """(name, program, args, ranks, metric columns) of every run."""
    if quick:
        p2p = ["-m", "1:65536", "-i", "200", "-x", "20"]
        coll = ["-m", "4:1048576", "-i", "50", "-x", "5"]
    else:
        p2p = ["-m", "1:4194304", "-i", "5000", "-x", "200"]
        coll = ["-m", "4:4194304", "-i", "1000", "-x", "100"]
    out = [("latency", "nicq_latency", p2p, 2, ["Latency (us)"]),
           ("bw", "nicq_bw", p2p, 2, ["Bandwidth (MB/s)"]),
           ("bibw", "nicq_bibw", p2p, 2, ["Bandwidth (MB/s)"]),
           ("latency_persistent", "nicq_latency_persistent", p2p, 2, ["Latency (us)"]),
           ("latency_matched", "nicq_latency_persistent", p2p + ["-M"], 2, ["Latency (us)"]),
           ("latency_queued", "nicq_latency_queued", p2p, 2, ["Latency (us)"]),
           ("ring_queued", "nicq_ring_queued", ["-m", "8:65536"] + p2p[2:], 2,
            ["Queued(us)", "Startall(us)", "Isend(us)", "Enqueue(ns)", "Wait(ns)", "Overlap(%)"])]
    for n in coll_ranks:
        for form in ["blocking", "nonblocking", "persistent", "queued"]:
            out.append((f"allreduce_{form}.n{n}", "nicq_allreduce", coll + ["--form", form], n,
                        ["Avg Latency(us)"]))
        for form in ["nonblocking", "persistent", "queued"]:
            out.append((f"allreduce_{form}_overlap.n{n}", "nicq_allreduce",
                        coll + ["--form", form, "-t"], n, ["Overlap(%)", "Pure Comm.(us)"]))
        for form in ["blocking", "persistent"]:
            out.append((f"bcast_{form}.n{n}", "nicq_bcast", coll + ["--form", form], n,
                        ["Avg Latency(us)"]))
        for form in ["blocking", "nonblocking", "persistent"]:
            out.append((f"barrier_{form}.n{n}", "nicq_barrier", coll[2:] + ["--form", form], n,
                        ["Avg Latency(us)"]))
    # Neighborhood collectives on a 2D 5-point stencil of 4 ranks.
    neighbor = coll[:1] + ["4:65536"] + coll[2:]
    for kind in ["alltoall", "allgather"]:
        for form in ["blocking", "persistent"]:
            out.append((f"neighbor_{kind}_{form}.n4", "nicq_neighbor",
                        neighbor + ["--coll", kind, "--form", form], 4, ["Avg Latency(us)"]))
    # One-sided: each operation with each synchronization the suite times.
    rma = p2p[:1] + ["1:65536"] + p2p[2:]
    for sync in ["lock", "flush", "lock_all", "pscw", "fence"]:
        out.append((f"put_latency_{sync}", "nicq_onesided", rma + ["--op", "put", "--sync", sync], 2,
                    ["Latency (us)"]))
    out.append(("get_latency_flush", "nicq_onesided", rma + ["--op", "get", "--sync", "flush"], 2,
                ["Latency (us)"]))
    out.append(("put_bw_flush", "nicq_onesided", rma + ["--op", "put", "--sync", "flush", "--bw"], 2,
                ["Bandwidth (MB/s)"]))
    out.append(("acc_latency_flush", "nicq_onesided", rma + ["--op", "acc", "--sync", "flush"], 2,
                ["Latency (us)"]))
    for op in ["fop", "cas"]:
        out.append((f"{op}_latency_flush", "nicq_onesided", p2p[2:] + ["--op", op, "--sync", "flush"],
                    2, ["Latency (us)"]))
    # The completion calls on a halo exchange's four requests (8 B), waiting
    # for the messages (-d 0) and finding them done (-d 1).
    iters = ["-i", "2000" if quick else "20000", "-b", "8"]
    for done, suffix in [("0", ""), ("1", "_done")]:
        out.append((f"completion{suffix}", "nicq_completion", iters + ["-d", done], 2,
                    [f"{form} (us)" for form in COMPLETION_FORMS]))
    return out


COMPLETION_LINE = re.compile(r"^(\w+) +(\d+) bytes \d+ iterations ([0-9.]+) us, ")


def parse(text):
    """{column name: {size: value}} of an OSU-style output, or of
    nicq_completion's lines ("<form> (us)" per message size)."""
    names, table = None, {}
    for line in text.splitlines():
        m = COMPLETION_LINE.match(line)
        if m:
            table.setdefault(f"{m.group(1)} (us)", {})[int(m.group(2))] = float(m.group(3))
        elif line.startswith("# Size"):
            names = re.split(r"\s{2,}", line[2:].strip())
            table = {n: {} for n in names[1:]}
        elif names and line.strip() and not line.startswith(("#", "nicq")):
            fields = line.split()
            if len(fields) != len(names):
                continue
            try:
                vals = [float(f) for f in fields]
            except ValueError:
                continue
            for n, v in zip(names[1:], vals[1:]):
                table[n][int(vals[0])] = v
    return table


def build_other(mpi, wrapper, out):
    bindir = os.path.join(out, "bin-" + mpi)
    os.makedirs(bindir, exist_ok=True)
    for src in SOURCES:
        subprocess.run([wrapper, "-O2", "-o", os.path.join(bindir, src),
                        os.path.join(HERE, src + ".c")], check=True)
    return bindir


def impl_name(spec):
    return "nicq-" + spec.replace(";", "+").replace("@", "+")


def implementations(args):
    """name -> (launcher for n ranks, bin dir, environment)"""
    impls = {}
    for spec in args.providers.split(","):
        # "shm@thread": the emulated backend with its progress thread.
        p, _, thread = spec.partition("@")
        env = {"NICQ_PROVIDER": p}
        if p == "sockets":
            env["NICQ_OFFLOAD"] = "native"
        if thread:
            env["NICQ_PROGRESS_THREAD"] = "1"
        impls[impl_name(spec)] = (
            lambda n: [os.path.join(args.nicq_bin, "nicqrun"), "-n", str(n), "--timeout",
                       str(args.timeout)], args.nicq_bin, env)
    for mpi, (wrapper, launcher, env) in OTHER_MPIS.items():
        if shutil.which(wrapper) and shutil.which(launcher[0]):
            bindir = build_other(mpi, wrapper, args.out)
            impls[mpi] = (lambda n, l=launcher: l + ["-n", str(n)], bindir, env)
    return impls


def run_all(args, benches, impls):
    """results[bench][impl][column][size] = [values over repetitions]"""
    results = {b[0]: {i: {} for i in impls} for b in benches}
    logdir = os.path.join(args.out, "runs")
    os.makedirs(logdir, exist_ok=True)
    start = time.time()
    for rep in range(args.reps):
        for name, prog, pargs, ranks, _ in benches:
            for impl, (launch, bindir, env) in impls.items():  # alternation
                cmd = launch(ranks) + [os.path.join(bindir, prog)] + pargs + ["-q"]
                try:
                    p = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True,
                                       text=True, timeout=args.timeout + 20)
                    text, rc = p.stdout + p.stderr, p.returncode
                except subprocess.TimeoutExpired as e:
                    text, rc = (e.stdout or b"").decode(errors="replace"), "timeout"
                with open(os.path.join(logdir, f"{name}.{impl}.{rep}.txt"), "w") as f:
                    f.write(" ".join(cmd) + "\n" + text)
                if rc != 0:
                    print(f"   {name} {impl} rep {rep}: failed ({rc})", file=sys.stderr)
                for col, series in parse(text).items():
                    for size, v in series.items():
                        results[name][impl].setdefault(col, {}).setdefault(size, []).append(v)
        print(f"== repetition {rep + 1}/{args.reps} done, {time.time() - start:.0f} s",
              file=sys.stderr)
    return results


def load_runs(args, benches):
    """The results of an earlier run, from its runs/ folder (--replot)."""
    logdir = os.path.join(args.out, "runs")
    names = {b[0] for b in benches}
    results, impls = {}, []
    for f in sorted(os.listdir(logdir)):
        name, impl, _ = f[:-len(".txt")].rsplit(".", 2)
        if name not in names:
            continue
        if impl not in impls:
            impls.append(impl)
        with open(os.path.join(logdir, f)) as fh:
            table = parse(fh.read())
        dest = results.setdefault(name, {})
        for col, series in table.items():
            for size, v in series.items():
                dest.setdefault(impl, {}).setdefault(col, {}).setdefault(size, []).append(v)
    # nicq first (the ratio reference), in the order --providers gives them.
    given = [impl_name(spec) for spec in args.providers.split(",")]
    order = sorted(impls, key=lambda i: (given.index(i) if i in given else len(given),
                                         not i.startswith("nicq"), i))
    for name in names:
        for impl in order:
            results.setdefault(name, {}).setdefault(impl, {})
    return results, {i: None for i in order}


def medians(series):
    return {s: statistics.median(v) for s, v in series.items()}


def write_outputs(args, benches, impls, results):
    gnuplot = shutil.which("gnuplot")
    md = [f"Medians of {args.reps} runs per point; ratio = nicq / other (latency: below 1 is "
          "nicq faster; bandwidth: above 1 is nicq faster; overlap: percentage points, not a "
          "ratio).", ""]
    ref = next((i for i in impls if i.startswith("nicq")), None)
    others = [i for i in impls if not i.startswith("nicq")]
    for name, _, _, ranks, metrics in benches:
        cols, table = [], {}
        for impl in impls:
            for m in metrics:
                series = medians(results[name][impl].get(m, {}))
                if series:
                    cols.append((impl, m))
                    for s, v in series.items():
                        table.setdefault(s, {})[(impl, m)] = v
        if not cols:
            continue
        sizes = sorted(table)
        path = os.path.join(args.out, name + ".csv")
        with open(path, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["size"] + [f"{i}:{m}" for i, m in cols])
            for s in sizes:
                w.writerow([s] + [f"{table[s][c]:.3f}" if c in table[s] else "" for c in cols])
        if gnuplot:
            plot(gnuplot, path, name, cols, sizes, ranks)
        md += markdown_table(name, ranks, metrics, sizes, table, impls, ref, others)
    with open(os.path.join(args.out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")


def markdown_table(name, ranks, metrics, sizes, table, impls, ref, others):
    picks = [s for s in sizes if s in (0, 4, 8, 1024, 65536, 1048576, 4194304)] or sizes[:1]
    lines = []
    for m in metrics:
        present = [i for i in impls if any((i, m) in table[s] for s in sizes)]
        if not present:
            continue
        ratio_to = [o for o in others if o in present] if ref in present else []
        lines += [f"**{name}** ({ranks} ranks), {m}:", "",
                  "| size | " + " | ".join(present) + "".join(
                      f" | {ref}/{o}" for o in ratio_to) + " |",
                  "|---" * (1 + len(present) + len(ratio_to)) + "|"]
        for s in picks:
            row = [f"{table[s][(i, m)]:.2f}" if (i, m) in table[s] else "—" for i in present]
            for o in ratio_to:
                a, b = table[s].get((ref, m)), table[s].get((o, m))
                if a is None or b is None:
                    row.append("—")
                elif "%" in m:
                    row.append(f"{a - b:+.1f}")
                else:
                    row.append(f"{a / b:.2f}" if b else "—")
            lines.append(f"| {s} | " + " | ".join(row) + " |")
        lines.append("")
    return lines


def unit(metric):
    found = re.findall(r"\(([^)]*)\)", metric)
    return found[-1] if found else metric


def plot(gnuplot, csv_path, name, cols, sizes, ranks):
    """One PNG of the columns in the first metric's unit; none for one size."""
    if len(sizes) < 2:
        return
    first = unit(cols[0][1])
    picked = [(k, i, m) for k, (i, m) in enumerate(cols) if unit(m) == first]
    series = ", ".join(f"'{csv_path}' using 1:{k + 2} with linespoints title '{i} {m}'"
                       for k, i, m in picked)
    terminal = ("set terminal pngcairo noenhanced size 800,500 font ',10'"
                if has_cairo(gnuplot) else "set terminal png noenhanced size 800,500")
    script = "\n".join([
        terminal, f"set output '{csv_path[:-4]}.png'", "set datafile separator ','",
        "set key top left", f"set title '{name} ({ranks} ranks), medians'",
        "set xlabel 'bytes'", "set logscale x 2" if sizes[0] > 0 else "",
        "set format x '%.0b%B'",
        "set yrange [0:105]" if first == "%" else "set logscale y", "set grid",
        f"set ylabel '{first}'", f"plot {series}", ""])
    subprocess.run([gnuplot], input=script, text=True, check=False)


def has_cairo(gnuplot):
    p = subprocess.run([gnuplot, "-e", "set terminal"], capture_output=True, text=True)
    return "pngcairo" in (p.stdout + p.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nicq-bin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--providers", default="shm,tcp;ofi_rxm")
    ap.add_argument("--coll-ranks", default="2")
    ap.add_argument("--only", default="", help="regex on benchmark names")
    ap.add_argument("--timeout", type=int, default=0)
    ap.add_argument("--replot", action="store_true",
                    help="only redo CSV, plots and table from --out's runs/")
    args = ap.parse_args()
    args.timeout = args.timeout or (60 if args.quick else 600)
    os.makedirs(args.out, exist_ok=True)
    benches = [b for b in benchmarks(args.quick, [int(n) for n in args.coll_ranks.split(",")])
               if re.search(args.only, b[0])]
    if args.replot:
        results, impls = load_runs(args, benches)
    else:
        impls = implementations(args)
        print("== " + ", ".join(impls) + f"; {len(benches)} benchmarks x {args.reps} "
              "repetitions", file=sys.stderr)
        results = run_all(args, benches, impls)
    write_outputs(args, benches, impls, results)
    print(f"== results: {args.out}/results.md, *.csv, *.png", file=sys.stderr)


if __name__ == "__main__":
    main()
