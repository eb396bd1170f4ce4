"""Default vs tuned vs autoscheduler-only, for every bench shape, in one run.

    python3 bench/tune_bench.py [--build build] [--tune-budget 60]
                                [--kernels a,b] [--out results/tune-<stamp>]

For each kernel of bench/kernels.py (but the gradient rows, group
"backward": the tuner tunes forward functions):
  1. tunes it: attn-compile <spec> --tune --tune-budget B with a tuning
     cache private to this run (so every shape is tuned afresh, never reused
     from an earlier run);
  2. times four schedules with attn-run --bench (HL_NUM_THREADS=2, the
     number of runs calibrated to fill --budget seconds, as bench/attn_bench.py
     does): the hand schedules' defaults, --autoscheduler Adams2019,
     --autoscheduler Mullapudi2016, and the tuned schedule
     (--tuning-cache <this run's cache>). The four alternate over --rounds
     rounds and each reports the median of its rounds' medians, so a burst
     of load from other processes hits all four alike.
The timings of step 2 are independent of the tuner's own measurements, so
"tuned is never worse than the best of the others" is checked, not assumed.
Writes <out>.json and <out>.md (a table for docs/performance.md) and prints
the table. Not a test; run it on a quiet machine (the load average is
recorded).
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attn_bench import BENCH_LINE, MAX_RUNS, MIN_RUNS, THREADS  # noqa: E402
from kernels import KERNELS, KERNELS_BY_NAME  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BEST_LINE = re.compile(r"^tune: @\S+ best (?P<candidate>.*): (?P<ms>[0-9.eE+-]+) "
                       r"ms; .* \((?P<tried>\d+) candidates\)$")
SCHEDULES = [
    ("default", []),
    ("Adams2019", ["--autoscheduler", "Adams2019"]),
    ("Mullapudi2016", ["--autoscheduler", "Mullapudi2016"]),
]
TIMEOUT_SECONDS = 1800


def load():
    return open("/proc/loadavg").read().split()[:3]


def bench(attn_run, kernel, extra, runs, seed):
    command = [attn_run, str(kernel.spec), "--func", kernel.func, "--random",
               str(seed), "--bench", str(runs), "--quiet"] + extra
    env = dict(os.environ, HL_NUM_THREADS=str(THREADS))
    done = subprocess.run(command, capture_output=True, text=True, env=env,
                          timeout=TIMEOUT_SECONDS)
    if done.returncode != 0:
        raise RuntimeError(f"exit {done.returncode}: "
                           + (done.stderr.strip() or "no message")[-300:])
    for line in done.stdout.splitlines():
        match = BENCH_LINE.match(line)
        if match:
            return float(match["median"]), int(match["runs"]), done.stderr
    raise RuntimeError("no bench line: " + done.stdout[:300])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default=str(ROOT / "build"))
    parser.add_argument("--kernels", default="")
    parser.add_argument("--tune-budget", type=float, default=60.0,
                        help="seconds of schedule search per kernel")
    parser.add_argument("--budget", type=float, default=3.0,
                        help="seconds of timed runs per kernel and schedule")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating rounds of the four timings")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", default="")
    args = parser.parse_args()
    names = [n for n in args.kernels.split(",") if n]
    kernels = [KERNELS_BY_NAME[n] for n in names] or [
        kernel for kernel in KERNELS if not kernel.grad]
    if any(kernel.grad for kernel in kernels):
        # attn-compile --tune tunes a spec's forward; the gradient rows
        # (group "backward") time @f_grad of a forward row's spec.
        parser.error("gradient rows cannot be tuned: "
                     + ", ".join(k.name for k in kernels if k.grad))
    attn_run = str(Path(args.build) / "bin" / "attn-run")
    attn_compile = str(Path(args.build) / "bin" / "attn-compile")
    stamp = time.strftime("%Y-%m-%dT%H-%M-%SZ", time.gmtime())
    out = Path(args.out) if args.out else ROOT / "bench" / "results" / f"tune-{stamp}"
    out.parent.mkdir(parents=True, exist_ok=True)
    cache = str(out) + ".tuning-cache.json"
    report = {"stamp": stamp, "tune_budget_seconds": args.tune_budget,
              "rounds": args.rounds,
              "bench_budget_seconds": args.budget, "threads": THREADS,
              "load_before": load(), "cpus": os.cpu_count(), "results": []}
    env = dict(os.environ, HL_NUM_THREADS=str(THREADS))
    for kernel in kernels:
        record = {"kernel": kernel.name}
        print(f"tune_bench: {kernel.name}: tuning ({args.tune_budget:g} s)",
              file=sys.stderr, flush=True)
        with tempfile.TemporaryDirectory() as work:
            start = time.time()
            done = subprocess.run(
                [attn_compile, str(kernel.spec), "--func", kernel.func, "-o",
                 work, "--tune", "--tune-budget", str(args.tune_budget),
                 "--tuning-cache", cache, "--no-runtime"],
                capture_output=True, text=True, env=env,
                timeout=TIMEOUT_SECONDS)
            record["tune_wall_seconds"] = round(time.time() - start, 1)
        best = [BEST_LINE.match(l) for l in done.stderr.splitlines()]
        best = [m for m in best if m]
        if done.returncode != 0 or not best:
            record["tune_error"] = done.stderr.strip()[-400:]
        else:
            record["tuned_candidate"] = best[-1]["candidate"]
            record["tuner_ms"] = float(best[-1]["ms"])
            record["candidates_tried"] = int(best[-1]["tried"])
        schedules = SCHEDULES + [("tuned", ["--tuning-cache", cache])]
        runs, medians = {}, {label: [] for label, _ in schedules}
        for label, extra in schedules:
            try:
                one, _, stderr = bench(attn_run, kernel, extra, 1, args.seed)
                if label == "tuned" and "cache hit" not in stderr:
                    raise RuntimeError("the tuned schedule was not in the cache")
                runs[label] = max(MIN_RUNS, min(
                    MAX_RUNS, int(args.budget * 1e3 / max(one, 1e-3))))
            except (RuntimeError, subprocess.TimeoutExpired) as exc:
                record[label] = {"error": str(exc)[-300:]}
        for _ in range(args.rounds):
            for label, extra in schedules:
                if label not in runs:
                    continue
                try:
                    median, _, _ = bench(attn_run, kernel, extra, runs[label],
                                         args.seed)
                    medians[label].append(median)
                except (RuntimeError, subprocess.TimeoutExpired) as exc:
                    record[label] = {"error": str(exc)[-300:]}
                    runs.pop(label)
        for label in runs:
            values = sorted(medians[label])
            record[label] = {"median_ms": values[len(values) // 2],
                             "round_medians_ms": medians[label],
                             "runs": runs[label]}
        print(f"tune_bench: {kernel.name}: " + json.dumps(record),
              file=sys.stderr, flush=True)
        report["results"].append(record)
    report["load_after"] = load()
    Path(str(out) + ".json").write_text(json.dumps(report, indent=2) + "\n")
    table = render(report)
    Path(str(out) + ".md").write_text(table)
    print(table)


def ms(record, label):
    entry = record.get(label, {})
    return entry.get("median_ms")


def render(report):
    lines = [
        f"Tuning budget {report['tune_budget_seconds']:g} s per kernel; "
        f"load average {' '.join(report['load_before'])} before, "
        f"{' '.join(report['load_after'])} after; {report['threads']} threads; "
        f"median of {report['rounds']} alternating rounds per schedule.",
        "",
        "| kernel | default ms | Adams2019 ms | Mullapudi2016 ms | tuned ms | "
        "tuned / best other | tuned choice | candidates |",
        "|---|---:|---:|---:|---:|---:|---|---:|",
    ]
    for r in report["results"]:
        cells = []
        for label in ("default", "Adams2019", "Mullapudi2016", "tuned"):
            value = ms(r, label)
            cells.append(f"{value:.3f}" if value is not None else "failed")
        others = [ms(r, l) for l in ("default", "Adams2019", "Mullapudi2016")]
        others = [v for v in others if v is not None]
        tuned = ms(r, "tuned")
        ratio = (f"{tuned / min(others):.2f}" if tuned is not None and others
                 else "-")
        lines.append(f"| {r['kernel']} | " + " | ".join(cells) + f" | {ratio} | "
                     f"{r.get('tuned_candidate', r.get('tune_error', '?'))} | "
                     f"{r.get('candidates_tried', '-')} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
