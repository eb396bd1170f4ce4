"""Merges one benchmark run into bench/results/<stamp>.json and a table.

    python3 bench/report.py --roofline before.json after.json
                            --attn attn-1.json attn-2.json ...
                            --peers peers-1.json peers-2.json ... --meta meta.json
                            --json-out results/<stamp>.json
                            [--markdown-out results/<stamp>.md]

Run by bench/run.sh. Prints the markdown table (docs/performance.md shows
one). Per kernel and implementation (its fastest round's median when the
run had several rounds): median ms, GFLOP/s, GB/s of compulsory
traffic, the roofline time and which ceiling sets it, the fraction of the
roofline reached (roofline time / median), the fraction of the FMA peak
(GFLOP/s / peak), and for each peer how many times faster attn is
(peer ms / attn ms; above 1 attn wins). Then the targets of issue 4.
"""

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import KERNELS, KERNELS_BY_NAME, bound, roofline_seconds  # noqa

# The targets of issue 4, item 6 (2 threads).
TARGETS = [
    # (kernel, measure, threshold, text)
    ("softmax_h8_n1024", "peak", 0.55, "softmax attention >= 55% of FMA peak"),
    ("softmax_h8_n4096", "peak", 0.55, "softmax attention >= 55% of FMA peak"),
    ("softmax_h8_n1024", "vs:torch.sdpa", 1.0, "softmax attention >= 1.0x PyTorch SDPA"),
    ("softmax_h8_n4096", "vs:torch.sdpa", 1.0, "softmax attention >= 1.0x PyTorch SDPA"),
    ("efficient_n65536", "roofline", 0.60, "efficient attention at n = 65536 >= 60% of roofline"),
    ("linear_n65536", "roofline", 0.60, "linear attention at n = 65536 >= 60% of roofline"),
    ("external_n4096", "peak", 0.50, "external attention >= 50% of FMA peak"),
    # Issue 5, item 5.
    ("deformable_encoder", "vs:torch.grid_sample", 5.0,
     "deformable attention >= 5x PyTorch grid_sample"),
    ("deformable_decoder", "vs:torch.grid_sample", 5.0,
     "deformable attention >= 5x PyTorch grid_sample"),
]


def load(path):
    return json.loads(Path(path).read_text())


def fastest_rounds(paths):
    """Merges the rounds of one side (attn or peers): per kernel and
    implementation, the record of the round with the smallest median, with
    every round's median in `round_medians_ms`. The rounds alternate attn
    and peers, so each side's best round comes from a comparable spell of
    the shared host."""
    rounds = [load(path) for path in paths]
    merged = {key: value for key, value in rounds[0].items()
              if key != "results"}
    best, medians, order = {}, {}, []
    for report in rounds:
        for record in report.get("results", []):
            key = (record["kernel"], record["impl"])
            if key not in best:
                order.append(key)
                medians[key] = []
            if "median_ms" in record:
                medians[key].append(record["median_ms"])
            current = best.get(key)
            if current is None or ("median_ms" in record and (
                    "median_ms" not in current
                    or record["median_ms"] < current["median_ms"])):
                best[key] = record
    merged["rounds"] = len(rounds)
    merged["results"] = [dict(best[key], round_medians_ms=medians[key])
                         for key in order]
    return merged


def machine_ceilings(rooflines):
    """The larger FMA peak and stream bandwidth of the probe's runs: the
    ceiling is what the machine can do, so the higher measurement binds."""
    peak = max(r["fma_peak_gflops"] for r in rooflines)
    bandwidth = max(r["stream_bandwidth_gbs"] for r in rooflines)
    return peak, bandwidth


def annotate(record, peak, bandwidth):
    """Adds the derived figures to one timed record."""
    kernel = KERNELS_BY_NAME[record["kernel"]]
    if "median_ms" not in record:
        return record
    seconds = record["median_ms"] * 1e-3
    roofline = roofline_seconds(kernel, peak, bandwidth)
    record.update(
        gflops=kernel.flops / seconds * 1e-9,
        gbs=kernel.compulsory_bytes / seconds * 1e-9,
        roofline_ms=roofline * 1e3,
        bound=bound(kernel, peak, bandwidth),
        fraction_of_roofline=roofline / seconds,
        fraction_of_fma_peak=kernel.flops / seconds * 1e-9 / peak)
    return record


def build_rows(attn, peers, peak, bandwidth):
    rows = {kernel.name: [] for kernel in KERNELS}
    for record in attn.get("results", []) + peers.get("results", []):
        if record["kernel"] in rows:
            rows[record["kernel"]].append(annotate(dict(record), peak, bandwidth))
    for name, records in rows.items():
        attn_ms = next((r["median_ms"] for r in records
                        if r["impl"] == "attn" and "median_ms" in r), None)
        for record in records:
            if record["impl"] != "attn" and "median_ms" in record and attn_ms:
                record["attn_speedup"] = record["median_ms"] / attn_ms
    return rows


def evaluate_targets(rows, attn_available, attn_reason):
    verdicts = []
    for kernel, measure, threshold, text in TARGETS:
        records = {r["impl"]: r for r in rows[kernel]}
        attn = records.get("attn")
        verdict = {"target": text, "kernel": kernel, "threshold": threshold,
                   "measure": measure}
        if not attn_available:
            verdict.update(status="not measured", value=None,
                           note=f"attn: not available ({attn_reason})")
        elif attn is None or "median_ms" not in attn:
            verdict.update(status="not measured", value=None,
                           note=(attn or {}).get("error", "attn did not run"))
        elif measure == "peak":
            verdict.update(value=attn["fraction_of_fma_peak"])
        elif measure == "roofline":
            verdict.update(value=attn["fraction_of_roofline"])
        else:
            peer = records.get(measure.split(":", 1)[1], {})
            if "attn_speedup" in peer:
                verdict.update(value=peer["attn_speedup"])
            else:
                verdict.update(status="not measured", value=None,
                               note="peer did not run")
        if verdict.get("value") is not None:
            verdict["status"] = "met" if verdict["value"] >= threshold else "missed"
        verdicts.append(verdict)
    return verdicts


def _fmt(value, spec, suffix=""):
    return "—" if value is None else f"{value:{spec}}{suffix}"


def markdown(rows, verdicts, rooflines, peak, bandwidth, attn, meta):
    out = []
    machine = meta.get("machine", {})
    out.append(f"Run {meta.get('stamp', '?')} on {machine.get('cpu', '?')}, "
               f"{rooflines[0]['threads']} threads; load average "
               f"{meta.get('load_before', '?')} before, "
               f"{meta.get('load_after', '?')} after.")
    if "other_processes_share_of_cores" in meta:
        out.append(f"While it measured ({meta['measurement_seconds']:.0f} s), "
                   "other processes used "
                   f"{100 * meta['other_processes_share_of_cores']:.0f}% of the "
                   "cores (0% is an idle machine; above ~5% the numbers are "
                   "disturbed).")
    if attn.get("rounds", 1) > 1:
        out.append(f"attn and the peers were timed alternately in "
                   f"{attn['rounds']} rounds; each row is its fastest round's "
                   "median (all rounds' medians are in the JSON).")
    out.append("")
    out.append("| ceiling | start of run | end of run | used |")
    out.append("|---|---:|---:|---:|")
    fma_names = sorted({isa for r in rooflines for isa in r["fma"]})
    for isa in fma_names:
        values = [r["fma"].get(isa, {}).get("median_gflops") for r in rooflines]
        out.append(f"| fp32 FMA, {isa} (GFLOP/s) | "
                   + " | ".join(_fmt(v, ".1f") for v in values)
                   + (f" | {peak:.1f} |" if max(v or 0 for v in values) == peak
                      else " | |"))
    for kind in ("copy", "triad"):
        values = [r["stream"][kind]["median_gbs"] for r in rooflines]
        out.append(f"| stream {kind} (GB/s) | "
                   + " | ".join(_fmt(v, ".1f") for v in values)
                   + (f" | {bandwidth:.1f} |" if max(values) == bandwidth
                      else " | |"))
    balance = peak / bandwidth
    out.append("")
    out.append(f"Machine balance: {balance:.1f} FLOP/byte (kernels below it "
               "are memory-bound).")
    out.append("")
    out.append("| kernel | impl | median ms | GFLOP/s | GB/s | roofline ms "
               "(bound) | of roofline | of FMA peak | attn speed-up |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for kernel in KERNELS:
        records = rows[kernel.name]
        if not attn.get("available", False):
            out.append(f"| {kernel.name} | attn | not available "
                       f"({attn.get('reason', '?')}) | | | | | | |")
        for r in records:
            if "median_ms" not in r:
                out.append(f"| {kernel.name} | {r['impl']} | failed: "
                           f"{r.get('error', '?')[:80]} | | | | | | |")
                continue
            flag = "" if r.get("agrees", True) else " (wrong result!)"
            if r.get("note"):
                flag += f" ({r['runs']} run{'s' if r['runs'] > 1 else ''})"
            out.append(
                f"| {kernel.name} | {r['impl']}{flag} | {r['median_ms']:.3f} | "
                f"{r['gflops']:.1f} | {r['gbs']:.1f} | "
                f"{r['roofline_ms']:.3f} ({r['bound']}) | "
                f"{100 * r['fraction_of_roofline']:.1f}% | "
                f"{100 * r['fraction_of_fma_peak']:.1f}% | "
                + (f"{r['attn_speedup']:.2f}x" if "attn_speedup" in r
                   else ("—" if r["impl"] == "attn" else "n/a")) + " |")
    llc = max(r["stream"].get("llc_bytes", 0) for r in rooflines)
    above = [(kernel, r) for kernel in KERNELS for r in rows[kernel.name]
             if r.get("fraction_of_roofline", 0) > 1]
    if above:
        # Nothing beats a true ceiling. Two ways past this one: a memory-bound
        # kernel whose data stays in the last-level cache between runs (the
        # stream ceiling is DRAM's), or ceilings measured low because the
        # machine was not idle.
        cached = [f"{k.name} {r['impl']}" for k, r in above
                  if r["bound"] == "memory" and k.compulsory_bytes < llc]
        other = [f"{k.name} {r['impl']}" for k, r in above
                 if not (r["bound"] == "memory" and k.compulsory_bytes < llc)]
        out.append("")
        if cached:
            out.append("**Above 100% of the roofline, memory-bound with data "
                       "in the last-level cache** (the stream ceiling is DRAM "
                       "bandwidth): " + ", ".join(cached) + ".")
        if other:
            out.append("**Warning: above 100% of the roofline:** "
                       + ", ".join(other) + ". The probe measured the ceilings "
                       "low (the machine was not idle); these fractions are "
                       "not trustworthy.")
    out.append("")
    out.append("| target | kernel | value | status |")
    out.append("|---|---|---:|---|")
    for v in verdicts:
        value = v.get("value")
        shown = ("—" if value is None else
                 f"{value:.2f}x" if v.get("measure", "").startswith("vs:")
                 else f"{100 * value:.1f}%")
        status = v["status"] + (f" ({v['note']})" if v.get("note") else "")
        out.append(f"| {v['target']} | {v['kernel']} | {shown} | {status} |")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--roofline", nargs="+", required=True)
    parser.add_argument("--attn", nargs="+", required=True,
                        help="attn_bench.py output, one file per round")
    parser.add_argument("--peers", nargs="+", required=True,
                        help="peers.py output, one file per round")
    parser.add_argument("--meta", required=True)
    parser.add_argument("--json-out", required=True)
    parser.add_argument("--markdown-out")
    args = parser.parse_args()

    rooflines = [load(path) for path in args.roofline]
    attn, peers = fastest_rounds(args.attn), fastest_rounds(args.peers)
    meta = load(args.meta)
    peak, bandwidth = machine_ceilings(rooflines)
    rows = build_rows(attn, peers, peak, bandwidth)
    verdicts = evaluate_targets(rows, attn.get("available", False),
                                attn.get("reason", ""))
    table = markdown(rows, verdicts, rooflines, peak, bandwidth, attn, meta)
    result = {
        "meta": meta,
        "roofline": {"runs": rooflines, "fma_peak_gflops": peak,
                     "stream_bandwidth_gbs": bandwidth},
        "kernels": [{"name": k.name, "family": k.family, "spec":
                     str(k.spec.relative_to(k.spec.parents[2])),
                     "params": k.params, "flops": k.flops,
                     "compulsory_bytes": k.compulsory_bytes,
                     "flop_per_byte": k.intensity} for k in KERNELS],
        "attn": {key: value for key, value in attn.items() if key != "results"},
        "peers": {key: value for key, value in peers.items()
                  if key != "results"},
        "results": [r for name in rows for r in rows[name]],
        "targets": verdicts,
    }
    Path(args.json_out).write_text(json.dumps(result, indent=2) + "\n")
    if args.markdown_out:
        Path(args.markdown_out).write_text(table)
    print(table, end="")


if __name__ == "__main__":
    main()
