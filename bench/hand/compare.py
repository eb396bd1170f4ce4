#!/usr/bin/env python3
"""Times attn's kernels against hand-written AVX-512 code of the same
algorithm, alternating the two in one run (bench/hand/README.md).

    python3 bench/hand/compare.py [--pairs P] [--peers] [--rows A,B]
                                  [--yardstick all|hand|products_only]
                                  [--attn-run PATH] [--json OUT]
                                  [--markdown-out OUT]

Builds the yardsticks (g++ -O3 -march=native, needs AVX-512) and the
roofline probe into bench/build/, measures the roofline, then for every
case runs attn (`attn-run SPEC --random 1 --bench R`, HL_NUM_THREADS=2) and
the hand-written kernel (2 threads) alternately P times, and prints per
case the medians, the median of the per-pair ratios attn / hand, and each
one's fraction of the roofline (bench/kernels.py's FLOPs and compulsory
bytes, against the higher of the probe's two readings, as bench/run.sh's
report does), of the median and of the fastest pair. With --peers, each
pair also times the row's PyTorch peers (bench/peers.py in the peers'
venv, bench/setup_peers.sh), so the ratios to PyTorch come from the same
minutes. Exits 1 when a run or a yardstick's
own check fails.

The `products_only` yardstick is not hand-written: it is attn's own kernel
of the row with its exponentials taken out, the same products in the same
loop nests. attn / it is what the exps and their statistics cost, and its
fraction of the roofline is what the row's products reach on this host:
- softmax attention: the softmax step becomes `norm [none over keys]`,
  compiled with --no-default-pipeline so that it stays quadratic (the
  tiles and passes, with a copy where the exps were);
- efficient attention: `variant softmax` becomes `variant scaling` (both
  softmaxes become one division by n);
- linear attention: the elu + 1 feature map is dropped (the same
  reassociated products and row sums).
When the run has products_only cases, it also runs exp_floor.cpp (the FMA
pipe slots one vector of attn's exp takes on this host) and prints, per
products_only row, the fraction of the roofline the row cannot exceed with
its products as fast as they ran and its exps at that cost (in passes of
their own, and beside the products' FMAs), against issue 24's target.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))
import kernels  # noqa: E402  (bench/kernels.py: FLOPs and bytes per row)

SOURCES = ("linear_forms_forward", "efficient_backward")
# The yardstick of a row's products: attn's kernel without its exps.
PRODUCTS_ONLY = "products_only"
# Per family of rows: the spec text holding the exps, what replaces it, and
# attn-run's extra flags.
PRODUCTS_ONLY_FORMS = {
    "softmax": ("norm [softmax over keys]", "norm [none over keys]",
                ["--no-default-pipeline"]),
    "efficient": ("variant softmax", "variant scaling", []),
    "linear": (" feature_map elu_plus_one", "", []),
}
# (row of bench/kernels.py, yardstick, its arguments before THREADS and
# REPEATS, repeats per timing)
CASES = [
    ("efficient_n4096", "linear_forms_forward", ["efficient", "4096"], 300),
    ("efficient_n16384", "linear_forms_forward", ["efficient", "16384"], 100),
    ("efficient_n65536", "linear_forms_forward", ["efficient", "65536"], 30),
    ("linear_n4096", "linear_forms_forward", ["linear", "4096"], 300),
    ("linear_n16384", "linear_forms_forward", ["linear", "16384"], 100),
    ("linear_n65536", "linear_forms_forward", ["linear", "65536"], 30),
    ("efficient_n65536_grad", "efficient_backward", ["65536"], 20),
    ("efficient_n4096", PRODUCTS_ONLY, [], 300),
    ("efficient_n16384", PRODUCTS_ONLY, [], 100),
    ("efficient_n65536", PRODUCTS_ONLY, [], 30),
    ("linear_n4096", PRODUCTS_ONLY, [], 300),
    ("linear_n16384", PRODUCTS_ONLY, [], 100),
    ("linear_n65536", PRODUCTS_ONLY, [], 30),
    ("softmax_h8_n1024", PRODUCTS_ONLY, [], 20),
    # At n = 4096 the softmax splits the keys (4 splits merged by their
    # maxima) and the kernel without it does not: the same products in a
    # loop nest without the splits and their merge.
    ("softmax_h8_n4096", PRODUCTS_ONLY, [], 3),
]
MEDIAN = re.compile(r"median ([0-9.]+) ms")
# The microbenchmark of the exp on the FMA pipes (exp_floor.cpp).
EXP_FLOOR = "exp_floor"
# Per family of products_only rows: issue 24's target (fraction of the
# roofline), and the exp_floor figures (slots per vector, in a pass of its
# own and beside a product's FMAs) of the exps it adds.
EXP_TARGETS = {"softmax": 0.85, "efficient": 0.80, "linear": 0.80}
EXP_KIND = {"softmax": "exp", "efficient": "exp", "linear": "elu_plus_one"}


def exp_vectors_per_slot(kernel):
    """Vectors of exps per 512-bit FMA of the roofline's products: softmax
    attention one per 16 scores, whose products are dk + dv FMAs per lane;
    efficient attention 2 dk / 16 (both softmaxes) per position against
    2 dk dv / 16; linear attention 2 dk / 16 (phi(Q), phi(K)) against the
    roofline's 2 dk (dv + 1) / 16 ([V 1])."""
    p, family = kernel.params, kernel.family
    if family == "softmax":
        return 1 / (p["dk"] + p["dv"])
    if family == "efficient":
        return 1 / p["dv"]
    return 1 / (p["dv"] + 1)


def exp_ceilings(products_fraction, kernel, floor):
    """The fractions of the roofline the row cannot exceed when its products
    run as they do without the exps (products_fraction) and the exps add
    their measured slots: in passes of their own, and hidden beside the
    products' FMAs. Time = products' time + exp slots at the FMA rate."""
    kind, per_slot = EXP_KIND[kernel.family], exp_vectors_per_slot(kernel)
    return tuple(1 / (1 / products_fraction + floor[f"{kind}_{where}"] *
                      per_slot) for where in ("alone", "beside_fmas"))


def run_exp_floor(binary):
    out = subprocess.run([str(binary)], capture_output=True, text=True,
                         check=True).stdout
    floor = {}
    for line in out.splitlines():
        *name, value = line.split()
        floor["_".join(name)] = float(value)
    return floor


def build(out_dir):
    out_dir.mkdir(parents=True, exist_ok=True)
    flags = ["g++", "-O3", "-march=native", "-std=c++17", "-pthread"]
    binaries = {}
    for name in SOURCES:
        source = BENCH / "hand" / f"{name}.cpp"
        binary = out_dir / f"hand_{name}"
        if not binary.exists() or binary.stat().st_mtime < max(
                source.stat().st_mtime,
                (BENCH / "hand" / "common.h").stat().st_mtime):
            subprocess.run(flags + ["-o", str(binary), str(source)],
                           check=True)
        binaries[name] = binary
    for name, source in (("roofline", BENCH / "roofline" / "roofline.cpp"),
                         (EXP_FLOOR, BENCH / "hand" / f"{EXP_FLOOR}.cpp")):
        binary = out_dir / name
        if (not binary.exists()
                or binary.stat().st_mtime < source.stat().st_mtime):
            subprocess.run(flags + ["-o", str(binary), str(source)],
                           check=True)
        binaries[name] = binary
    return binaries, binaries.pop("roofline")


def median_ms(command, env):
    result = subprocess.run(command, capture_output=True, text=True, env=env)
    match = MEDIAN.search(result.stdout)
    if result.returncode != 0 or not match:
        sys.exit(f"hand: {' '.join(map(str, command))} failed "
                 f"(exit {result.returncode}):\n{result.stdout}{result.stderr}")
    return float(match.group(1))


def products_only_spec(kernel, out_dir):
    """The row's spec without its exps (PRODUCTS_ONLY_FORMS), written to
    out_dir, and attn-run's extra flags for it."""
    family = kernel.name.split("_")[0]
    if family not in PRODUCTS_ONLY_FORMS:
        sys.exit(f"hand: no products-only form for {kernel.name}")
    exps, replacement, flags = PRODUCTS_ONLY_FORMS[family]
    text = kernel.spec.read_text()
    if text.count(exps) != 1:
        sys.exit(f"hand: {kernel.spec} has no single '{exps}'")
    spec = Path(out_dir) / f"{kernel.name}_products_only.mlir"
    spec.write_text(text.replace(exps, replacement))
    return spec, flags


def torch_peer_ms(row):
    """The fastest PyTorch peer's median for `row` (bench/peers.py)."""
    python = BENCH / ".venv-peers" / "bin" / "python"
    if not python.exists():
        sys.exit("hand: --peers needs the peers' venv: run bench/setup_peers.sh")
    out = subprocess.run([str(python), str(BENCH / "peers.py"), "--kernels",
                          row, "--budget", "1"], capture_output=True,
                         text=True, check=True).stdout
    times = [r["median_ms"] for r in json.loads(out)["results"]
             if r["impl"].startswith("torch.") and r.get("agrees", True)]
    if not times:
        sys.exit(f"hand: no PyTorch peer timed {row}")
    return min(times)


def probe_roofline(probe):
    out = subprocess.run([str(probe), "--threads", "2", "--repeats", "5"],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def exp_floor_table(results, floor):
    """The exp_floor measurement and, per products_only row, the ceilings
    it puts on the row (exp_ceilings) against issue 24's target."""
    lines = [f"{EXP_FLOOR}: FMA-pipe slots per vector, in a pass of its own "
             f"/ beside 16 FMAs: exp {floor['exp_alone']:.2f} / "
             f"{floor['exp_beside_fmas']:.2f}, elu + 1 "
             f"{floor['elu_plus_one_alone']:.2f} / "
             f"{floor['elu_plus_one_beside_fmas']:.2f} (a multiply "
             f"{floor['slots_vmulps']:.2f}, a compare into a mask "
             f"{floor['slots_vpcmpgtd_to_mask']:.2f})", "",
             "| row | products only, fastest pair | exp vectors per FMA "
             "| ceiling, exps in passes | ceiling, exps beside the products "
             "| target |", "|---|---:|---:|---:|---:|---|"]
    for r in results:
        if r["yardstick"][0] != PRODUCTS_ONLY:
            continue
        kernel = kernels.KERNELS_BY_NAME[r["row"]]
        products = r["roofline_ms"] / min(r["hand_ms"])
        passes, beside = exp_ceilings(products, kernel, floor)
        target = EXP_TARGETS[kernel.family]
        r.update(exp_ceiling_passes=passes, exp_ceiling_beside=beside)
        verdict = ("out of reach with these products" if beside < target
                   else "out of reach with exps in passes" if passes < target
                   else "within both ceilings")
        lines.append(f"| {r['row']} | {100 * products:.1f}% | "
                     f"1/{1 / exp_vectors_per_slot(kernel):.0f} | "
                     f"{100 * passes:.1f}% | {100 * beside:.1f}% | "
                     f"{100 * target:.0f}%: {verdict} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=7,
                        help="alternations of attn and hand per case")
    parser.add_argument("--attn-run", default=str(ROOT / "build/bin/attn-run"))
    parser.add_argument("--peers", action="store_true",
                        help="also time the PyTorch peers in every pair")
    rows = list(dict.fromkeys(c[0] for c in CASES))
    parser.add_argument("--rows", help="comma-separated rows to time "
                        "(default: all: " + ", ".join(rows) + ")")
    parser.add_argument("--yardstick", choices=["all", "hand", PRODUCTS_ONLY],
                        default="all",
                        help="time the rows against the hand-written "
                        f"yardsticks, against {PRODUCTS_ONLY}, or both")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--markdown-out",
                        help="also write the printed table here")
    args = parser.parse_args()
    if args.pairs < 1:
        parser.error("--pairs must be at least 1")
    cases = CASES
    if args.rows:
        wanted = args.rows.split(",")
        unknown = sorted(set(wanted) - set(rows))
        if unknown:
            parser.error(f"unknown rows: {', '.join(unknown)} (known: "
                         + ", ".join(rows) + ")")
        cases = [c for c in CASES if c[0] in wanted]
    if args.yardstick != "all":
        own = args.yardstick == PRODUCTS_ONLY
        cases = [c for c in cases if (c[1] == PRODUCTS_ONLY) == own]
    if not cases:
        parser.error(f"no case of {args.rows} has a {args.yardstick} "
                     "yardstick")
    specs = tempfile.TemporaryDirectory(prefix="attn-hand-")
    binaries, probe = build(BENCH / "build")
    env = dict(os.environ, HL_NUM_THREADS="2")
    start = probe_roofline(probe)
    floor = None
    if any(c[1] == PRODUCTS_ONLY for c in cases):
        floor = run_exp_floor(binaries.pop(EXP_FLOOR))
    results = []
    for row, yardstick, yardstick_args, repeats in cases:
        kernel = kernels.KERNELS_BY_NAME[row]
        attn_cmd = [args.attn_run, str(kernel.spec), "--random", "1", "--bench",
                    str(repeats), "--quiet"]
        if kernel.grad:  # as bench/attn_bench.py times the row
            attn_cmd.append("--grad")
            if kernel.saved_statistics:
                attn_cmd.append("--grad-save-statistics")
        if yardstick == PRODUCTS_ONLY:
            spec, flags = products_only_spec(kernel, specs.name)
            hand_cmd = ([args.attn_run, str(spec)] + flags +
                        ["--random", "1", "--bench", str(repeats), "--quiet"])
        else:
            hand_cmd = ([str(binaries[yardstick])] + yardstick_args +
                        ["2", str(repeats + 1)])
        attn_ms, hand_ms, ratios, torch_ms = [], [], [], []
        for _ in range(args.pairs):
            a = median_ms(attn_cmd, env)
            h = median_ms(hand_cmd, env)
            attn_ms.append(a)
            hand_ms.append(h)
            ratios.append(a / h)
            if args.peers:
                torch_ms.append(torch_peer_ms(row))
        results.append(dict(row=row, yardstick=[yardstick] + yardstick_args,
                            attn_ms=attn_ms, hand_ms=hand_ms,
                            attn_over_hand=ratios, torch_ms=torch_ms))
        print(f"hand: {row}: attn {statistics.median(attn_ms):.3f} ms, hand "
              f"{statistics.median(hand_ms):.3f} ms, attn/hand "
              f"{statistics.median(ratios):.2f}", file=sys.stderr)
    end = probe_roofline(probe)
    fma = max(start["fma_peak_gflops"], end["fma_peak_gflops"])
    stream = max(start["stream_bandwidth_gbs"], end["stream_bandwidth_gbs"])
    read = max(start["read_bandwidth_gbs"], end["read_bandwidth_gbs"])
    lines = [f"roofline: FMA peak {start['fma_peak_gflops']:.0f} / "
             f"{end['fma_peak_gflops']:.0f} GFLOP/s, stream "
             f"{start['stream_bandwidth_gbs']:.1f} / "
             f"{end['stream_bandwidth_gbs']:.1f} GB/s (start / end; the "
             f"higher is used)", ""]
    peers = " torch ms | torch / attn | torch / hand |" if args.peers else ""
    # The fastest pair too: on a noisy host the noise only adds time.
    lines.append("| row | yardstick | pairs | attn ms | hand ms | attn / hand "
                 "(median of pairs) | attn of roofline | hand of roofline | "
                 "attn, fastest pair | hand, fastest pair |" + peers)
    lines.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|" +
                 "---:|" * (3 * args.peers))
    for r in results:
        kernel = kernels.KERNELS_BY_NAME[r["row"]]
        roof_ms = 1e3 * kernels.roofline_seconds(kernel, fma, stream, read)
        a, h = statistics.median(r["attn_ms"]), statistics.median(r["hand_ms"])
        r.update(roofline_ms=roof_ms, attn_fraction=roof_ms / a,
                 hand_fraction=roof_ms / h)
        line = (f"| {r['row']} | {r['yardstick'][0]} | {len(r['attn_ms'])} "
                f"| {a:.3f} | {h:.3f} | "
                f"{statistics.median(r['attn_over_hand']):.2f} | "
                f"{100 * roof_ms / a:.1f}% | {100 * roof_ms / h:.1f}% | "
                f"{100 * roof_ms / min(r['attn_ms']):.1f}% | "
                f"{100 * roof_ms / min(r['hand_ms']):.1f}% |")
        if r["torch_ms"]:
            # Per pair: each ratio from the same minutes.
            per_attn = [t / x for t, x in zip(r["torch_ms"], r["attn_ms"])]
            per_hand = [t / x for t, x in zip(r["torch_ms"], r["hand_ms"])]
            line += (f" {statistics.median(r['torch_ms']):.3f} | "
                     f"{statistics.median(per_attn):.2f}x | "
                     f"{statistics.median(per_hand):.2f}x |")
        lines.append(line)
    if floor:
        lines += ["", f"{PRODUCTS_ONLY}: attn's own kernel of the row without "
                  "its exps (softmax: norm [none over keys], "
                  "--no-default-pipeline; efficient: variant scaling; linear:"
                  " no feature map); not hand-written.", ""]
        lines += exp_floor_table(results, floor)
    print("\n".join(lines))
    if args.markdown_out:
        Path(args.markdown_out).write_text("\n".join(lines) + "\n")
    if args.json:
        Path(args.json).write_text(json.dumps(
            dict(roofline_start=start, roofline_end=end, exp_floor=floor,
                 results=results), indent=1) + "\n")


if __name__ == "__main__":
    main()
