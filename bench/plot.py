"""Draws a bench run as a roofline plot (PNG): every kernel and peer as a
point (arithmetic intensity, GFLOP/s) under the ceilings the run's probe
measured.

    bench/.venv-peers/bin/python bench/plot.py RESULTS.json -o roofline.png

bench/run.sh draws bench/results/<stamp>.png after each run (matplotlib is
in the peers' venv, bench/requirements-peers.txt). Intensity is the row's
FLOPs over its compulsory bytes (bench/kernels.py); the ceilings are
min(peak, bandwidth x intensity) for the FMA peak with the stream and the
read bandwidth, and the bf16 dot-product peak when the run has bf16 rows.
"""
import argparse
import json
import math

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

MARKERS = {"attn": ("o", "tab:red"), "torch": ("s", "tab:blue"),
           "ort": ("^", "tab:green")}


def style(impl):
    """attn, PyTorch (torch.*) and ONNX Runtime (ort.*) each their marker."""
    return MARKERS.get(impl.split(".")[0], ("x", "tab:gray"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", help="bench/results/<stamp>.json")
    parser.add_argument("-o", "--output", required=True, help="the PNG")
    options = parser.parse_args()
    run = json.load(open(options.results))
    roofline, meta = run["roofline"], run["meta"]
    intensity = {k["name"]: k["flop_per_byte"] for k in run["kernels"]
                 if k.get("flop_per_byte")}
    points = [(intensity[r["kernel"]], r["gflops"], r["kernel"], r["impl"])
              for r in run["results"]
              if r.get("gflops") and r["kernel"] in intensity]
    if not points:
        raise SystemExit(f"plot: no timed kernel in {options.results}")

    low = min(p[0] for p in points) / 2
    high = max(p[0] for p in points) * 2
    xs = [low * (high / low) ** (i / 200) for i in range(201)]
    figure, axes = plt.subplots(figsize=(10, 6.5), dpi=110)
    ceilings = [("FMA peak", roofline["fma_peak_gflops"],
                 roofline["stream_bandwidth_gbs"], "stream", "k")]
    if any(k.get("dtype") == "bf16" for k in run["kernels"]) and \
            roofline.get("bf16_dot_peak_gflops"):
        ceilings.append(("bf16 dot peak", roofline["bf16_dot_peak_gflops"],
                         roofline["stream_bandwidth_gbs"], "stream", "0.5"))
    for label, peak, bandwidth, kind, color in ceilings:
        axes.plot(xs, [min(peak, bandwidth * x) for x in xs], color=color,
                  linewidth=1.5,
                  label=f"{label} {peak:.0f} GFLOP/s, {kind} {bandwidth:.1f} GB/s")
    if roofline.get("read_bandwidth_gbs"):
        read = roofline["read_bandwidth_gbs"]
        axes.plot(xs, [min(roofline["fma_peak_gflops"], read * x) for x in xs],
                  color="k", linestyle=":", linewidth=1,
                  label=f"read {read:.1f} GB/s")

    shown = set()
    for x, gflops, kernel, impl in points:
        marker, color = style(impl)
        family = impl.split(".")[0]
        axes.scatter([x], [gflops], marker=marker, color=color, s=36,
                     zorder=3, label=None if family in shown else family)
        shown.add(family)
    # attn's labels; points of one intensity (efficient and linear attention
    # at every n share 10.7) get a column of labels, top to bottom in the
    # order of their points, each with a line to its point.
    clusters = {}
    for x, gflops, kernel, impl in points:
        if impl == "attn":
            clusters.setdefault(round(math.log10(x), 1), []).append(
                (x, gflops, kernel))
    for cluster in clusters.values():
        cluster.sort(key=lambda point: -point[1])
        top = cluster[0][1]
        for rank, (x, gflops, kernel) in enumerate(cluster):
            if len(cluster) == 1:
                axes.annotate(kernel, (x, gflops), textcoords="offset points",
                              xytext=(5, 3), fontsize=7)
                continue
            # Steps of 0.05 decades (about a line of 7-point text) from
            # above the highest point down.
            axes.annotate(kernel, (x, gflops),
                          xytext=(x * 0.45, top * 1.5 * 10 ** (-0.05 * rank)),
                          fontsize=7, va="center", ha="right",
                          arrowprops={"arrowstyle": "-", "linewidth": 0.5,
                                      "color": "0.5"})
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("arithmetic intensity (FLOP / compulsory byte)")
    axes.set_ylabel("GFLOP/s (2 threads)")
    axes.set_title(f"bench run {meta['stamp']}, commit {meta['commit']}, "
                   f"{meta['machine']['cpu']}", fontsize=10)
    axes.grid(True, which="both", linewidth=0.3)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    figure.savefig(options.output)
    print(f"plot: wrote {options.output} ({len(points)} points)")


if __name__ == "__main__":
    main()
