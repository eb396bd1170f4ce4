"""Times the benchmark kernels compiled by attn.

    python3 bench/attn_bench.py --attn-run build/bin/attn-run [--budget S]
                                [--kernels a,b] [--max-score-bytes B]
                                [--out attn.json]

Run by bench/run.sh. For each kernel of bench/kernels.py (`--kernels` takes
kernel and group names, as BENCH_KERNELS does) it runs

    attn-run bench/specs/<kernel>.mlir --random SEED --bench N --quiet

(a gradient row, group "backward": the spec of its forward row, plus
--grad, so @<func>_grad is timed with a random cotangent; softmax,
efficient, linear and external rows also --grad-save-statistics: @f_grad
takes the lse and output, the context (and key sums) or the weights that
attn-run computes with @f first,
untimed, as the peers' backward takes what their forward saved) with
HL_NUM_THREADS=2 (the size of Halide's thread pool), once with N = 1
to learn the time of one run, then with N chosen to fill `--budget` seconds
(5 to 100 runs; a kernel too slow for 5 runs keeps its one calibration run,
and the record says so), and parses the one line attn-run prints:

    bench: @<func> median <ms> ms over <N> runs (min <ms> ms)

If attn-run has no --bench option the JSON says so and no kernel is timed.

A gradient row is not run when the largest tensor of the gradient attn
would compile exceeds --max-score-bytes (default: the environment's
BENCH_MAX_SCORE_BYTES, else 2e9): attn's gradient recomputes what it needs
of the forward, in primitive form where no fused backward applies (masked
softmax attention), and such a form may materialize n x m score matrices.
Softmax attention without a mask gets attn.attention_grad, which stores none
(its tensors are the gradients). The largest tensor
is read from `attn-opt SPEC --attn-grad --attn-default-pipeline` (the
attn-opt next to attn-run: what attn-run --grad compiles), so a gradient
the compiler reassociates (linear attention's: no n x m tensor) runs; without
attn-opt, the estimate is Kernel.score_bytes. The record of a skipped row
says `skipped` and why, and the report shows it as such.
"""

import argparse
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import select  # noqa: E402

THREADS = 2
MIN_RUNS, MAX_RUNS, CALIBRATION_RUNS = 5, 100, 1
# A kernel whose MIN_RUNS runs take more than this many budgets is timed by
# its calibration run alone (a quadratic form at n = 65536 takes ~20 s).
SLOW_FACTOR = 4
# JIT compilation plus a spec's runs must end in this time.
TIMEOUT_SECONDS = 600
BENCH_LINE = re.compile(
    r"^bench: @(?P<func>[\w.$-]+) median (?P<median>[0-9.eE+-]+) ms over "
    r"(?P<runs>\d+) runs \(min (?P<min>[0-9.eE+-]+) ms\)$")
NOT_AVAILABLE = "attn-run has no --bench yet"
DEFAULT_MAX_SCORE_BYTES = 2e9
F32_TENSOR = re.compile(r"tensor<((?:\d+x)+)f32>")


def largest_gradient_tensor(attn_run, kernel):
    """(shape, bytes) of the largest f32 tensor of @<func>_grad as
    attn-run --grad compiles it (attn-opt --attn-grad
    --attn-default-pipeline, the attn-opt next to attn-run), or None when
    attn-opt is missing or fails."""
    attn_opt = Path(attn_run).with_name("attn-opt")
    try:
        grad = ("--attn-grad=save-statistics=1" if kernel.saved_statistics
                else "--attn-grad")
        completed = subprocess.run(
            [str(attn_opt), str(kernel.spec), grad, "--attn-default-pipeline"],
            capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    body = next((chunk for chunk in completed.stdout.split("func.func @")
                 if chunk.startswith(f"{kernel.timed_func}(")), None)
    if completed.returncode != 0 or body is None:
        return None
    shapes = [tuple(int(dim) for dim in match.group(1)[:-1].split("x"))
              for match in F32_TENSOR.finditer(body)]
    if not shapes:
        return None
    shape = max(shapes, key=math.prod)
    return shape, 4 * math.prod(shape)


def skip_reason(attn_run, kernel, max_score_bytes):
    """None, or why a gradient row is not run: the largest tensor its
    gradient materializes (each of them; attn's gradient keeps several)
    exceeds the limit."""
    if not kernel.grad:
        return None
    largest = largest_gradient_tensor(attn_run, kernel)
    if largest is None:
        what, size = "n x m score matrices (estimated)", kernel.score_bytes
    else:
        what = "a " + "x".join(str(dim) for dim in largest[0]) + " f32 tensor"
        size = largest[1]
    if size <= max_score_bytes:
        return None
    return (f"attn's gradient materializes {what} of {size / 1e9:.3g} GB "
            f"(> BENCH_MAX_SCORE_BYTES = {max_score_bytes:.3g})")


def unavailable_reason(attn_run):
    """None if attn-run lists --bench in its help, else why it cannot time."""
    if not os.access(attn_run, os.X_OK):
        return f"{attn_run} is not built"
    try:
        help_text = subprocess.run([attn_run, "--help-hidden"],
                                   capture_output=True, text=True,
                                   timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{attn_run} --help-hidden failed: {exc}"
    if re.search(r"^\s*--bench\b", help_text, re.MULTILINE) is None:
        return NOT_AVAILABLE
    return None


def run_bench(attn_run, kernel, runs, seed):
    """Runs attn-run --bench; returns (median ms, min ms, runs) or raises."""
    command = [attn_run, str(kernel.spec), "--func", kernel.func,
               "--random", str(seed), "--bench", str(runs), "--quiet"]
    if kernel.grad:
        command.append("--grad")
    if kernel.saved_statistics:
        command.append("--grad-save-statistics")
    env = dict(os.environ, HL_NUM_THREADS=str(THREADS))
    completed = subprocess.run(command, capture_output=True, text=True,
                               env=env, timeout=TIMEOUT_SECONDS)
    lines = [line for line in completed.stdout.splitlines() if line.strip()]
    if completed.returncode != 0:
        raise RuntimeError(f"exit {completed.returncode}: "
                           + (completed.stderr.strip() or "no message")[:300])
    matches = [BENCH_LINE.match(line) for line in lines]
    if len(lines) != 1 or not matches[0]:
        raise RuntimeError("expected one 'bench: @func median ...' line, got: "
                           + repr(completed.stdout[:300]))
    match = matches[0]
    if match["func"] != kernel.timed_func or int(match["runs"]) != runs:
        raise RuntimeError(f"attn-run timed @{match['func']} over "
                           f"{match['runs']} runs, asked @{kernel.timed_func} "
                           f"over {runs}")
    return float(match["median"]), float(match["min"]), int(match["runs"])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--attn-run", required=True, help="path of attn-run")
    parser.add_argument("--kernels", default="",
                        help="comma-separated kernel and group names "
                        "(default: all)")
    parser.add_argument("--budget", type=float, default=3.0,
                        help="seconds of timed runs per kernel")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--max-score-bytes", type=float,
        default=float(os.environ.get("BENCH_MAX_SCORE_BYTES")
                      or DEFAULT_MAX_SCORE_BYTES),
        help="skip gradient rows whose n x m score matrices exceed this "
        "(default: $BENCH_MAX_SCORE_BYTES, else 2e9)")
    parser.add_argument("--out", help="write the JSON here (default: stdout)")
    args = parser.parse_args()

    try:
        kernels = select(args.kernels)
    except ValueError as exc:
        parser.error(str(exc))

    report = {"threads": THREADS, "attn_run": args.attn_run,
              "max_score_bytes": args.max_score_bytes, "results": []}
    reason = unavailable_reason(args.attn_run)
    if reason:
        report["available"] = False
        report["reason"] = reason
        print(f"attn: not available ({reason})", file=sys.stderr)
    else:
        report["available"] = True
        for kernel in kernels:
            record = {"kernel": kernel.name, "impl": "attn"}
            skipped = skip_reason(args.attn_run, kernel,
                                  args.max_score_bytes)
            if skipped:
                record["skipped"] = skipped
                print(f"attn:  {kernel.name:<28} skipped: {skipped}",
                      file=sys.stderr, flush=True)
                report["results"].append(record)
                continue
            try:
                calibration, fastest, runs = run_bench(
                    args.attn_run, kernel, CALIBRATION_RUNS, args.seed)
                if calibration * 1e-3 * MIN_RUNS <= args.budget * SLOW_FACTOR:
                    runs = int(args.budget * 1e3 / max(calibration, 1e-3))
                    runs = max(MIN_RUNS, min(MAX_RUNS, runs))
                    median, fastest, runs = run_bench(args.attn_run, kernel,
                                                      runs, args.seed)
                else:
                    # So slow that MIN_RUNS runs would blow the time of the
                    # whole benchmark: the calibration run is the result.
                    median = calibration
                    record["note"] = (f"{runs} run(s) only: one run takes "
                                      f"{calibration / 1e3:.1f} s")
                record.update(median_ms=median, min_ms=fastest, runs=runs)
                print(f"attn:  {kernel.name:<28} {median:10.3f} ms over "
                      f"{runs} runs", file=sys.stderr, flush=True)
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
                record["error"] = str(exc)
                print(f"attn:  {kernel.name:<28} failed: {exc}",
                      file=sys.stderr, flush=True)
            report["results"].append(record)
    text = json.dumps(report, indent=2)
    if args.out:
        Path(args.out).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
