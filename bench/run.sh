#!/usr/bin/env bash
# The benchmark, in one command:   bench/run.sh
#
#  1. builds attn (scripts/setup.sh) and the peers' venv (bench/setup_peers.sh),
#     checks bench/specs against bench/kernels.py and every peer against the
#     attn reference runtime on small shapes (bench/check_peers.py);
#  2. builds the roofline probe with the system g++ and measures the FMA peak,
#     the bf16 dot-product peak (vdpbf16ps, AVX512-BF16 CPUs only), stream,
#     read-only and gather bandwidth (deformable attention's bilinear corner
#     reads); again at the end of the run, and the larger binds;
#  3. times every kernel of bench/kernels.py with attn-run --bench, then with
#     PyTorch and ONNX Runtime, all with 2 threads;
#  4. writes bench/results/<stamp>.json (+ .md) and prints the table.
#
# Environment: ATTN_RUN (the attn-run to time, default build/bin/attn-run),
# BENCH_BUDGET (seconds of timed runs per kernel and
# implementation, default 3), BENCH_KERNELS (the rows to time, default all):
# a comma-separated list of kernel names and group names, a group name
# standing for every row of the group, `core` (the rows of issues 4 and 5),
# `shapes` (softmax attention at the shapes users run, issue 27),
# `backward` (gradients: attn-run --grad against torch.autograd, issue 21) or
# `bf16` (issue 22: softmax attention at n = 1024 and 4096, efficient and
# linear attention at n = 65536 and the deformable encoder with every tensor
# bf16, against PyTorch on bf16 tensors and attn's f32 twin of each row; a
# bf16 row brings its f32 twin into the run);
# `python3 bench/kernels.py` lists the rows and their groups. E.g.
#   BENCH_KERNELS=shapes                    every row of issue 27
#   BENCH_KERNELS=shapes,softmax_h8_n4096   plus the row causal_h8_n4096's
#                                           target compares with
#   BENCH_KERNELS=softmax_h8_n1024,decode_h8_m32768
#   BENCH_KERNELS=backward,softmax_h8_n1024 a gradient row and its forward
#   BENCH_KERNELS=bf16                      the bf16 rows and their f32 twins
# BENCH_MAX_SCORE_BYTES (default 2e9): attn's gradient rows whose largest
# tensor (a primitive-form gradient, e.g. of masked softmax, can materialize
# n x m scores; the fused softmax backward does not) exceeds this many bytes
# are skipped, with the reason in the table.
# BENCH_NO_BUILD=1: use the attn build as it is (ATTN_BUILD_DIR, default
# build/) instead of running scripts/setup.sh, e.g. to time a build made
# elsewhere or while the sources change under it.
# BENCH_ROUNDS (default 3): attn and the peers are timed alternately in this
# many rounds, so both see the same spells of interference from other
# machines sharing the host; each implementation's result is its fastest
# round's median (every round's median is kept in the JSON).
# Options: --compare EARLIER.json (after the run, bench/compare.py: each
# kernel's fraction of the roofline against that run's; exits 1 when attn
# dropped beyond the noise measured across rounds, docs/performance.md
# "Comparing runs").
# Also writes bench/results/<stamp>.png, the run as a roofline plot
# (bench/plot.py).
# Not a test: it is not part of ctest. Run it on an otherwise idle machine;
# the load average and the CPU time other processes took while it measured
# are recorded in the results.
set -euo pipefail
COMPARE=""
while (($#)); do
  case "$1" in
    --compare)
      [ $# -ge 2 ] || { echo "bench: --compare needs a results .json" >&2; exit 2; }
      COMPARE="$(realpath "$2")"; shift 2 ;;
    --compare=*) COMPARE="$(realpath "${1#--compare=}")"; shift ;;
    *) echo "bench: unknown argument '$1' (bench/run.sh [--compare EARLIER.json])" >&2
       exit 2 ;;
  esac
done
if [ -n "$COMPARE" ] && [ ! -r "$COMPARE" ]; then
  echo "bench: --compare: cannot read $COMPARE" >&2; exit 2
fi
BENCH="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(dirname "$BENCH")"
BUILD="${ATTN_BUILD_DIR:-$ROOT/build}"
BUDGET="${BENCH_BUDGET:-3}"
KERNELS="${BENCH_KERNELS:-}"
ROUNDS="${BENCH_ROUNDS:-3}"
ATTN_RUN="${ATTN_RUN:-$BUILD/bin/attn-run}"
cd "$ROOT"

if [ "${BENCH_NO_BUILD:-0}" = 1 ]; then
  echo "bench: BENCH_NO_BUILD=1: using $BUILD as it is" >&2
  [ -x "$BUILD/bin/attn-run" ] || { echo "bench: no $BUILD/bin/attn-run" >&2; exit 1; }
else
  echo "bench: building attn (scripts/setup.sh)" >&2
  scripts/setup.sh >&2
fi
PYTHON="$ROOT/.venv/bin/python"
# A misspelt BENCH_KERNELS fails here, not after the peers and the probe.
"$PYTHON" bench/kernels.py --select "$KERNELS" > /dev/null || exit 2
echo "bench: peers (bench/setup_peers.sh)" >&2
bench/setup_peers.sh >&2
PEERS_PYTHON="$BENCH/.venv-peers/bin/python"
"$PYTHON" bench/kernels.py --check-specs
echo "bench: checking the peers against the attn reference runtime" >&2
"$PEERS_PYTHON" bench/check_peers.py --attn-run "$BUILD/bin/attn-run"

mkdir -p "$BENCH/build" "$BENCH/results"
PROBE="$BENCH/build/roofline"
if [ ! -x "$PROBE" ] || [ "$BENCH/roofline/roofline.cpp" -nt "$PROBE" ]; then
  echo "bench: building the roofline probe" >&2
  g++ -O3 -march=native -std=c++17 -pthread -Wall -Wextra \
    -o "$PROBE" "$BENCH/roofline/roofline.cpp"
fi

STAMP="$(date -u +%Y-%m-%dT%H-%M-%SZ)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
load() { cut -d' ' -f1-3 /proc/loadavg; }
LOAD_BEFORE="$(load)"
# CPU time of the whole machine (/proc/stat) and of this script's children
# (bash's `times`) around the measurements: the difference is what other
# processes took from the two cores while we measured.
times > "$WORK/times-start"
CPU_START="$(head -1 /proc/stat)" WALL_START="$(date +%s.%N)"
case "$LOAD_BEFORE" in
  0.[0-4]*) ;;
  *) echo "bench: warning: load average $LOAD_BEFORE; other work will skew" \
          "the numbers" >&2 ;;
esac

# The gather ceiling's table: the deformable encoder's value tensor.
read -r GATHER_BYTES GATHER_ROW_FLOATS GATHER_PIXEL_FLOATS GATHER_LEVELS \
  < <("$PYTHON" bench/kernels.py --gather-table)
PROBE_ARGS=(--threads 2 --gather-table-bytes "$GATHER_BYTES"
            --gather-row-floats "$GATHER_ROW_FLOATS"
            --gather-pixel-floats "$GATHER_PIXEL_FLOATS"
            --gather-levels "$GATHER_LEVELS")
echo "bench: roofline probe (start)" >&2
"$PROBE" "${PROBE_ARGS[@]}" > "$WORK/roofline-start.json"
for round in $(seq "$ROUNDS"); do
  echo "bench: round $round of $ROUNDS: attn kernels" >&2
  "$PYTHON" bench/attn_bench.py --attn-run "$ATTN_RUN" \
    --budget "$BUDGET" --kernels "$KERNELS" --out "$WORK/attn-$round.json"
  echo "bench: round $round of $ROUNDS: peers" >&2
  "$PEERS_PYTHON" bench/peers.py --budget "$BUDGET" --kernels "$KERNELS" \
    --out "$WORK/peers-$round.json"
done
echo "bench: roofline probe (end)" >&2
"$PROBE" "${PROBE_ARGS[@]}" > "$WORK/roofline-end.json"
LOAD_AFTER="$(load)"
times > "$WORK/times-end"
CPU_END="$(head -1 /proc/stat)" WALL_END="$(date +%s.%N)"

# What the results need to be read later: the machine, the load, the commit.
export BENCH_STAMP="$STAMP" BENCH_LOAD_BEFORE="$LOAD_BEFORE" \
  BENCH_LOAD_AFTER="$LOAD_AFTER" BENCH_BUDGET="$BUDGET" BENCH_KERNELS="$KERNELS" \
  BENCH_ROUNDS="$ROUNDS" \
  BENCH_CPU_START="$CPU_START" BENCH_CPU_END="$CPU_END" \
  BENCH_TIMES_START="$(cat "$WORK/times-start")" BENCH_TIMES_END="$(cat "$WORK/times-end")" \
  BENCH_WALL_START="$WALL_START" BENCH_WALL_END="$WALL_END"
export BENCH_COMMIT="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
export BENCH_DIRTY="$(git status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo 1 || echo 0)"
"$PYTHON" - "$WORK/meta.json" <<'EOF'
import json, os, platform, sys
env = os.environ
cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo")
            if line.startswith("model name")), platform.processor())
def busy_seconds(stat_line):
    # cpu user nice system idle iowait irq softirq steal ...: busy = all but
    # idle and iowait; steal (time the hypervisor gave to others) counts too.
    fields = [int(x) for x in stat_line.split()[1:9]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def children_seconds(times_output):
    # Second line of bash `times`: children's user and system time, XmY.YYYs.
    total = 0.0
    for part in times_output.splitlines()[1].split():
        minutes, seconds = part.rstrip("s").split("m")
        total += 60 * float(minutes) + float(seconds)
    return total


wall = float(env["BENCH_WALL_END"]) - float(env["BENCH_WALL_START"])
ours = children_seconds(env["BENCH_TIMES_END"]) - children_seconds(
    env["BENCH_TIMES_START"])
machine = busy_seconds(env["BENCH_CPU_END"]) - busy_seconds(env["BENCH_CPU_START"])
others = max(0.0, machine - ours)
json.dump({
    "stamp": env["BENCH_STAMP"], "command": "bench/run.sh",
    "budget_seconds": float(env["BENCH_BUDGET"]),
    "rounds": int(env["BENCH_ROUNDS"]),
    "kernels": env["BENCH_KERNELS"] or "all",
    "commit": env["BENCH_COMMIT"], "uncommitted_changes": env["BENCH_DIRTY"] == "1",
    "load_before": env["BENCH_LOAD_BEFORE"], "load_after": env["BENCH_LOAD_AFTER"],
    "measurement_seconds": round(wall, 1),
    "benchmark_cpu_seconds": round(ours, 1),
    "other_processes_cpu_seconds": round(others, 1),
    "other_processes_share_of_cores": round(others / (wall * os.cpu_count()), 3),
    "machine": {"cpu": cpu, "cpus": os.cpu_count(), "os": platform.platform(),
                "memory_gib": round(os.sysconf("SC_PAGE_SIZE")
                                    * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)},
}, open(sys.argv[1], "w"), indent=2)
EOF

"$PYTHON" bench/report.py \
  --roofline "$WORK/roofline-start.json" "$WORK/roofline-end.json" \
  --attn "$WORK"/attn-*.json --peers "$WORK"/peers-*.json --meta "$WORK/meta.json" \
  --json-out "$BENCH/results/$STAMP.json" --markdown-out "$BENCH/results/$STAMP.md"
"$PEERS_PYTHON" bench/plot.py "$BENCH/results/$STAMP.json" \
  -o "$BENCH/results/$STAMP.png" >&2
echo "bench: wrote bench/results/$STAMP.json, .md and .png" >&2
if [ -n "$COMPARE" ]; then
  echo "bench: comparing with $COMPARE" >&2
  "$PYTHON" bench/compare.py "$BENCH/results/$STAMP.json" "$COMPARE" \
    --markdown-out "$BENCH/results/$STAMP-compare.md"
fi
