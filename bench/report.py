"""Merges one benchmark run into bench/results/<stamp>.json and a table.

    python3 bench/report.py --roofline before.json after.json
                            --attn attn-1.json attn-2.json ...
                            --peers peers-1.json peers-2.json ... --meta meta.json
                            --json-out results/<stamp>.json
                            [--markdown-out results/<stamp>.md]

Run by bench/run.sh. Prints the markdown table (docs/performance.md shows
one). Per kernel and implementation (its fastest round's median when the
run had several rounds): median ms, GFLOP/s, GB/s of compulsory
traffic, the roofline time and the ceiling it is measured against
(compute: the FMA peak; triad or copy: the stream bandwidth, named after
the STREAM kernel that measured it; read: the read-only bandwidth, for the
read-dominated rows of issue 27, see bench/kernels.py), the fraction of the
roofline reached (roofline time / median), the fraction of the FMA peak
(GFLOP/s / peak), and for each peer how many times faster attn is
(peer ms / attn ms; above 1 attn wins). Then, for the rows of issue 27 (the
"shapes" group), one line per row: attn, SDPA and ORT MHA times, attn's
speed-up, its fraction of the roofline and its targets. Then the same for
the gradient rows of issue 21 (the "backward" group), with attn's forward
row of the same spec where the run has it, and its fraction of the FMA
peak. Then the same for the bf16 rows of issue 22 (the "bf16" group):
attn's time, its f32 twin's time in the same run and the speed-up over it,
the PyTorch bf16 peers' times and attn's speed-ups, its fraction of the
roofline and, for softmax attention, of the bf16 dot-product peak (the
probe's `bf16_dot_peak_gflops`; the bf16 softmax rows' compute ceiling,
bench/kernels.py). Then the targets of issues 4, 5, 21, 22, 24 and 27, each
met or missed, for the rows in the run. A row attn_bench.py skipped (a gradient
whose largest tensor exceeds BENCH_MAX_SCORE_BYTES) is shown as skipped,
with why, and its targets as not measured; so is a peer peers.py leaves out
of a row (ONNX Runtime and grid_sample on the bf16 rows).
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kernels import (GROUPS, KERNELS, KERNELS_BY_NAME, bound,  # noqa: E402
                     ceiling, compute_peak, roofline_seconds)

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

# The targets of issue 27 (softmax attention at the shapes users run).
DECODE_ROWS = ["decode_h8_m32768", "decode_h1_m262144",
               "gqa_decode_h32kv8_m8192_d128"]
HEAD_DIM_ROWS = ["h8_n4096_d128", "h8_n4096_d32", "h8_n4096_d80",
                 "h8_n4096_d96", "h8_n4096_d256", "h8_n4096_dk128_dv64"]
TARGETS += [
    *[(row, "vs:torch.sdpa", 1.2, "decode >= 1.2x PyTorch SDPA")
      for row in DECODE_ROWS],
    *[(row, "read", 0.75, "decode >= 75% of the read-bandwidth ceiling")
      for row in DECODE_ROWS],
    ("queries16_h8_m32768", "vs:torch.sdpa", 1.2,
     "16 queries >= 1.2x PyTorch SDPA"),
    ("causal_h8_n4096", "vs:torch.sdpa", 1.2, "causal >= 1.2x PyTorch SDPA"),
    # attn's own non-causal row of the same shape: causal does half the work.
    ("causal_h8_n4096", "vs_row:softmax_h8_n4096", 1.8,
     "causal >= 1.8x faster than attn's non-causal softmax_h8_n4096"),
    ("window_b64h3_n49_d32_bias", "vs:torch.sdpa", 1.2,
     "window attention >= 1.2x PyTorch SDPA"),
    *[(row, "vs:torch.sdpa", 1.1, "head dim at n = 4096 >= 1.1x PyTorch SDPA")
      for row in HEAD_DIM_ROWS],
    *[(row, "peak", 0.75, "head dim >= 64 at n = 4096 >= 75% of FMA peak")
      for row in HEAD_DIM_ROWS if KERNELS_BY_NAME[row].params["dk"] >= 64
      and KERNELS_BY_NAME[row].params["dv"] >= 64],
]
# The targets of issue 21, item 8 (gradients; the peers: torch.autograd).
TARGETS += [
    *[(row, "vs:torch.sdpa", 1.0,
       "softmax backward >= 1.0x PyTorch SDPA backward")
      for row in ("softmax_h8_n1024_grad", "softmax_h8_n4096_grad")],
    *[(row, "peak", 0.50, "softmax backward >= 50% of FMA peak")
      for row in ("softmax_h8_n1024_grad", "softmax_h8_n4096_grad")],
    *[(row, "vs:torch.plain", 2.0, f"{family} backward >= 2x PyTorch autograd")
      for row, family in (("efficient_n65536_grad", "efficient"),
                          ("linear_n65536_grad", "linear"),
                          ("external_n4096_grad", "external"))],
    ("deformable_encoder_grad", "vs:torch.grid_sample", 5.0,
     "deformable backward >= 5x PyTorch grid_sample autograd"),
]
# The targets of issue 24, items 1 and 2 (the deformable rows against the
# gather ceiling the probe measures; its "2.5x faster than when the issue
# was filed" compares hosts, so docs/performance.md states it, not this
# table).
LINEAR_FORM_ROWS = [f"{family}_n{n}" for family in ("efficient", "linear")
                    for n in (4096, 16384, 65536)]
TARGETS += [
    *[(row, "gather", 0.50,
       "deformable attention >= 50% of its gather ceiling")
      for row in ("deformable_encoder", "deformable_decoder")],
    *[(row, "roofline", 0.80,
       f"{row.split('_')[0]} attention >= 80% of roofline at every n")
      for row in LINEAR_FORM_ROWS],
    *[(row, "peak", 0.85, "softmax attention >= 85% of FMA peak")
      for row in ("softmax_h8_n1024", "softmax_h8_n4096")],
    *[(row, "vs:ort.mha", 1.1,
       "softmax attention >= 1.1x ONNX Runtime MultiHeadAttention")
      for row in ("softmax_h8_n1024", "softmax_h8_n4096")],
]
# The targets of issue 22, item 5 (bf16 rows; the peers: PyTorch on bf16
# tensors, and attn's own f32 kernel of the same spec in the same run).
# The *_bf16_weights rows opt into bf16 products (attn.allow_bf16_products):
# softmax rounds its weights before P V, as PyTorch's bf16 SDPA rounds P;
# efficient attention its weights and context, linear attention phi(Q),
# phi(K) and its context, as PyTorch's bf16 matmuls read bf16 operands.
BF16_SOFTMAX_ROWS = ["softmax_h8_n1024_bf16", "softmax_h8_n4096_bf16",
                     "softmax_h8_n1024_bf16_weights",
                     "softmax_h8_n4096_bf16_weights"]
TARGETS += [
    *[(row, f"vs_row:{KERNELS_BY_NAME[row].f32_twin}", 1.5,
       "bf16 softmax attention >= 1.5x attn's f32 kernel")
      for row in BF16_SOFTMAX_ROWS],
    *[(row, "vs:torch.sdpa", 1.3,
       "bf16 softmax attention >= 1.3x PyTorch bf16 SDPA")
      for row in BF16_SOFTMAX_ROWS],
    *[(row, "bf16_dot", 0.60,
       "bf16 softmax attention >= 60% of the bf16 dot-product peak")
      for row in BF16_SOFTMAX_ROWS],
    *[(row, f"vs_row:{KERNELS_BY_NAME[row].f32_twin}", 1.3,
       f"bf16 {family} attention at n = 65536 >= 1.3x attn's f32 kernel")
      for row, family in (("efficient_n65536_bf16", "efficient"),
                          ("efficient_n65536_bf16_weights", "efficient"),
                          ("linear_n65536_bf16", "linear"),
                          ("linear_n65536_bf16_weights", "linear"))],
]
assert all(kernel in KERNELS_BY_NAME for kernel, *_ in TARGETS), \
    "a target names a kernel bench/kernels.py does not have"
# Per group, the peers of its one-line-per-row summary: each one's time and
# attn's speed-up over it (n/a where the peer cannot state the row).
SUMMARY_PEERS = {"shapes": ("torch.sdpa", "ort.mha"),
                 "backward": ("torch.sdpa", "torch.plain",
                              "torch.grid_sample"),
                 "bf16": ("torch.sdpa", "torch.plain", "torch.grid_sample")}
# Per group: what the summary is, and what its n/a means.
SUMMARY_TITLES = {
    "shapes": ("issue 27: softmax attention at the shapes users run",
               "the peer cannot state the row"),
    "backward": ("issue 21: gradients, attn-run --grad against the backward "
                 "pass alone of torch.autograd; attn fwd: attn's forward row "
                 "of the same spec in this run",
                 "not a peer of the row's family"),
    "bf16": ("issue 22: every tensor bf16, against PyTorch on bf16 tensors; "
             "attn f32: attn's f32 twin of the row in this run",
             "not a peer of the row's family; skipped: the table above says "
             "why"),
}
# Per group: the column of attn's related row in the same run (its header,
# and the Kernel field naming the row), and whether to show attn's speed-up
# over it (a bf16 row against its f32 twin; a gradient is not a speed-up
# over its forward).
SUMMARY_PARTNER = {"backward": ("attn fwd ms", "forward", False),
                   "bf16": ("attn f32 ms", "f32_twin", True)}
# Per group: the peak column (header, record field), where there is one.
SUMMARY_PEAK = {"backward": ("attn of FMA peak", "fraction_of_fma_peak"),
                "bf16": ("attn of bf16 dot peak", "fraction_of_bf16_dot_peak")}


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


class Ceilings:
    """The machine's ceilings from the probe's runs, the larger of each: the
    ceiling is what the machine can do, so the higher measurement binds.
    stream_kind names the STREAM kernel (copy or triad) that measured the
    stream bandwidth; read is None for a probe without the read measurement,
    bf16_dot for one without the bf16 dot-product peak (no AVX512-BF16, or a
    probe older than it), gather for one without the gather
    bandwidth (the deformable rows' gather ceiling)."""

    def __init__(self, rooflines):
        self.peak = max(r["fma_peak_gflops"] for r in rooflines)
        self.bandwidth = max(r["stream_bandwidth_gbs"] for r in rooflines)
        self.stream_kind = max(
            ((r["stream"][kind]["median_gbs"], kind) for r in rooflines
             for kind in ("copy", "triad")))[1]
        reads = [r["read_bandwidth_gbs"] for r in rooflines
                 if "read_bandwidth_gbs" in r]
        self.read = max(reads) if reads else None
        dots = [r["bf16_dot_peak_gflops"] for r in rooflines
                if r.get("bf16_dot_peak_gflops")]
        self.bf16_dot = max(dots) if dots else None
        gathers = [r["gather_bandwidth_gbs"] for r in rooflines
                   if r.get("gather_bandwidth_gbs")]
        self.gather = max(gathers) if gathers else None

    def label(self, kernel):
        """compute, bf16 dot, copy, triad or read: what the kernel is
        measured against."""
        name = ceiling(kernel, self.peak, self.bandwidth, self.read,
                       self.bf16_dot)
        if name == "bf16_dot":
            return "bf16 dot"
        return self.stream_kind if name == "stream" else name


def annotate(record, ceilings):
    """Adds the derived figures to one timed record."""
    kernel = KERNELS_BY_NAME[record["kernel"]]
    if "median_ms" not in record:
        return record
    seconds = record["median_ms"] * 1e-3
    peak = ceilings.peak
    roofline = roofline_seconds(kernel, peak, ceilings.bandwidth,
                                ceilings.read, ceilings.bf16_dot)
    record.update(
        gflops=kernel.flops / seconds * 1e-9,
        gbs=kernel.compulsory_bytes / seconds * 1e-9,
        roofline_ms=roofline * 1e3,
        bound=bound(kernel, peak, ceilings.bandwidth, ceilings.read,
                    ceilings.bf16_dot),
        ceiling=ceilings.label(kernel),
        fraction_of_roofline=roofline / seconds,
        fraction_of_fma_peak=kernel.flops / seconds * 1e-9 / peak)
    if ceilings.read:
        record["fraction_of_read_bandwidth"] = (
            kernel.compulsory_bytes / seconds * 1e-9 / ceilings.read)
    if kernel.gather_bytes and ceilings.gather:
        # The time the samples' corner reads take at the gather bandwidth,
        # over the kernel's time (issue 24).
        record["gather_ceiling_ms"] = (
            kernel.gather_bytes / (ceilings.gather * 1e9) * 1e3)
        record["fraction_of_gather_ceiling"] = (
            record["gather_ceiling_ms"] / record["median_ms"])
    if kernel.compute_ceiling == "bf16_dot" and ceilings.bf16_dot:
        record["fraction_of_bf16_dot_peak"] = (
            kernel.flops / seconds * 1e-9 / ceilings.bf16_dot)
        if compute_peak(kernel, peak, ceilings.bf16_dot)[1] == "fma":
            record["bf16_dot_below_fma"] = (
                f"the bf16 dot peak, {ceilings.bf16_dot:.1f} GFLOP/s, is "
                f"below the FMA peak, {peak:.1f}: attn multiplies bf16 on "
                f"FMAs here; {record['fraction_of_fma_peak']:.1%} of the "
                "FMA peak")
    return record


def build_rows(attn, peers, ceilings):
    """Per kernel of the run (every kernel with a record), its annotated
    records, in KERNELS order."""
    rows = {kernel.name: [] for kernel in KERNELS}
    for record in attn.get("results", []) + peers.get("results", []):
        if record["kernel"] in rows:
            rows[record["kernel"]].append(annotate(dict(record), ceilings))
    rows = {name: records for name, records in rows.items() if records}
    for name, records in rows.items():
        attn_ms = next((r["median_ms"] for r in records
                        if r["impl"] == "attn" and "median_ms" in r), None)
        for record in records:
            if record["impl"] != "attn" and "median_ms" in record and attn_ms:
                record["attn_speedup"] = record["median_ms"] / attn_ms
    return rows


def _attn_ms(rows, kernel):
    return next((r["median_ms"] for r in rows.get(kernel, [])
                 if r["impl"] == "attn" and "median_ms" in r), None)


# Measures that are a fraction of a ceiling only some probes measure: the
# key of attn's record, and the note where the record has none.
PROBED_FRACTIONS = {
    "read": ("fraction_of_read_bandwidth",
             "the probe measured no read bandwidth"),
    "gather": ("fraction_of_gather_ceiling",
               "the probe measured no gather bandwidth"),
}


def evaluate_targets(rows, attn_available, attn_reason):
    """The verdicts of the targets whose kernel is in the run."""
    verdicts = []
    for kernel, measure, threshold, text in TARGETS:
        if kernel not in rows:
            continue
        records = {r["impl"]: r for r in rows[kernel]}
        attn = records.get("attn")
        verdict = {"target": text, "kernel": kernel, "threshold": threshold,
                   "measure": measure}
        if not attn_available:
            verdict.update(status="not measured", value=None,
                           note=f"attn: not available ({attn_reason})")
        elif attn is None or "median_ms" not in attn:
            attn = attn or {}
            note = (f"skipped: {attn['skipped']}" if "skipped" in attn
                    else _first_line(attn.get("error", "attn did not run")))
            verdict.update(status="not measured", value=None, note=note)
        elif measure == "peak":
            verdict.update(value=attn["fraction_of_fma_peak"])
        elif measure == "roofline":
            verdict.update(value=attn["fraction_of_roofline"])
        elif measure in PROBED_FRACTIONS:
            key, missing = PROBED_FRACTIONS[measure]
            if key in attn:
                verdict.update(value=attn[key])
            else:
                verdict.update(status="not measured", value=None, note=missing)
        elif measure == "bf16_dot":
            if "fraction_of_bf16_dot_peak" in attn:
                verdict.update(value=attn["fraction_of_bf16_dot_peak"])
                if "bf16_dot_below_fma" in attn:
                    verdict["note"] = attn["bf16_dot_below_fma"]
            else:
                verdict.update(status="not measured", value=None,
                               note="the probe measured no bf16 dot "
                               "peak (no AVX512-BF16)")
        elif measure.startswith("vs_row:"):
            other = measure.split(":", 1)[1]
            other_ms = _attn_ms(rows, other)
            if other_ms is None:
                verdict.update(status="not measured", value=None,
                               note=f"attn's {other} not in this run (add it "
                               "to BENCH_KERNELS)")
            else:
                verdict.update(value=other_ms / attn["median_ms"])
        else:
            peer = records.get(measure.split(":", 1)[1], {})
            if "attn_speedup" in peer:
                verdict.update(value=peer["attn_speedup"])
                rounds = round_speedups(attn, peer)
                if rounds:
                    verdict["round_speedups"] = rounds
            else:
                verdict.update(status="not measured", value=None,
                               note=f"peer skipped: {peer['skipped']}"
                               if "skipped" in peer else "peer did not run")
        if verdict.get("value") is not None:
            verdict["status"] = "met" if verdict["value"] >= threshold else "missed"
        rounds = verdict.get("round_speedups")
        if rounds:
            middle = statistics.median(rounds)
            note = (f"per round {min(rounds):.2f}x-{max(rounds):.2f}x, "
                    f"median {middle:.2f}x")
            # The fastest rounds of the two sides may come from different
            # spells of a noisy host: a target met there but not in the
            # median round is not met reliably.
            if verdict["status"] == "met" and middle < threshold:
                note += ": met in the fastest rounds only"
                verdict["fastest_rounds_only"] = True
            # The converse: the median round meets it, the two fastest
            # rounds (perhaps of different spells) do not. Still a miss.
            elif verdict["status"] == "missed" and middle >= threshold:
                note += ": met in the median round, not between the fastest"
                verdict["median_round_only"] = True
            verdict["note"] = note
        verdicts.append(verdict)
    return verdicts


def round_speedups(attn, peer):
    """attn's speed-up over the peer in each round (the peer's median over
    attn's of the same round; the rounds alternate attn and the peers), or
    None without two or more rounds of both."""
    ours = attn.get("round_medians_ms") or []
    theirs = peer.get("round_medians_ms") or []
    if len(ours) < 2 or len(ours) != len(theirs):
        return None
    return [t / a for a, t in zip(ours, theirs) if a > 0]


def _first_line(text):
    """An error's first line (attn-run's caret lines would break a table)."""
    return text.strip().splitlines()[0] if text.strip() else text


def _fmt(value, spec, suffix=""):
    return "—" if value is None else f"{value:{spec}}{suffix}"


def _target_label(measure, threshold):
    """A verdict's target in a few words: '>= 1.20x torch.sdpa'."""
    if measure.startswith("vs:"):
        return f">= {threshold:.2f}x {measure[3:]}"
    if measure.startswith("vs_row:"):
        return f">= {threshold:.2f}x attn {measure[7:]}"
    what = {"peak": "FMA peak", "roofline": "roofline",
            "read": "read bw", "bf16_dot": "bf16 dot peak"}[measure]
    return f">= {100 * threshold:.0f}% {what}"


def _shown(verdict):
    value = verdict.get("value")
    if value is None:
        return "—"
    if verdict.get("measure", "").startswith("vs"):
        return f"{value:.2f}x"
    return f"{100 * value:.1f}%"


def group_summary(group, rows, verdicts):
    """One line per row of `group` in the run: attn's time, its related
    row's time (SUMMARY_PARTNER) and the speed-up over it where the group
    shows one, each summary peer's time and attn's speed-up over it, attn's
    fraction of its roofline (and which ceiling) and of the group's peak
    (SUMMARY_PEAK), and its targets met or missed."""
    peers = SUMMARY_PEERS[group]
    names = [k.name for k in GROUPS[group] if k.name in rows]
    if not names:
        return []
    partner_header, partner_field, partner_speedup = SUMMARY_PARTNER.get(
        group, (None, None, False))
    peak_header, peak_field = SUMMARY_PEAK.get(group, (None, None))
    speedups = ([f"attn vs {partner_header[:-3]}"] if partner_speedup else []) \
        + [f"attn vs {peer}" for peer in peers]
    headers = (["kernel", "attn ms"]
               + ([partner_header] if partner_header else [])
               + [f"{peer} ms" for peer in peers] + speedups
               + ["attn of roofline (ceiling)"]
               + ([peak_header] if peak_header else []) + ["targets"])
    out = ["| " + " | ".join(headers) + " |",
           "|---|" + "---:|" * (len(headers) - 2) + "---|"]
    for name in names:
        records = {r["impl"]: r for r in rows[name]}
        attn = records.get("attn", {})
        cells = [name, "skipped" if "skipped" in attn
                 else "failed" if "error" in attn
                 else _fmt(attn.get("median_ms"), ".3f")]
        partner_ms = None
        if partner_header:
            partner_ms = _attn_ms(
                rows, getattr(KERNELS_BY_NAME[name], partner_field))
            cells.append(_fmt(partner_ms, ".3f"))
        for peer in peers:
            record = records.get(peer)
            if record is None:
                cells.append("n/a")
            elif "skipped" in record:
                cells.append("skipped")
            elif "median_ms" not in record:
                cells.append("failed")
            else:
                cells.append(f"{record['median_ms']:.3f}"
                             + ("" if record.get("agrees", True)
                                else " (wrong result!)"))
        if partner_speedup:
            cells.append(_fmt(partner_ms / attn["median_ms"]
                              if partner_ms and "median_ms" in attn else None,
                              ".2f", "x"))
        for peer in peers:
            cells.append(_fmt(records.get(peer, {}).get("attn_speedup"),
                              ".2f", "x"))
        cells.append(f"{100 * attn['fraction_of_roofline']:.1f}% "
                     f"({attn['ceiling']})" if "fraction_of_roofline" in attn
                     else "—")
        if peak_header:
            cells.append(_fmt(100 * attn[peak_field], ".1f", "%")
                         if peak_field in attn else "—")
        cells.append("; ".join(
            f"{_target_label(v['measure'], v['threshold'])}: {_shown(v)} "
            f"{v['status']}"
            + (" in the fastest rounds only" if v.get("fastest_rounds_only")
               else "")
            for v in verdicts if v["kernel"] == name) or "—")
        out.append("| " + " | ".join(cells) + " |")
    return out


def markdown(rows, verdicts, rooflines, ceilings, attn, meta):
    peak, bandwidth = ceilings.peak, ceilings.bandwidth
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
                   + (f" | {bandwidth:.1f} |" if kind == ceilings.stream_kind
                      else " | |"))
    if ceilings.read is not None:
        values = [r.get("read_bandwidth_gbs") for r in rooflines]
        out.append("| read only (GB/s) | "
                   + " | ".join(_fmt(v, ".1f") for v in values)
                   + f" | {ceilings.read:.1f} |")
    if ceilings.bf16_dot is not None:
        values = [r.get("bf16_dot_peak_gflops") for r in rooflines]
        out.append("| bf16 dot product, vdpbf16ps (GFLOP/s) | "
                   + " | ".join(_fmt(v, ".1f") for v in values)
                   + f" | {ceilings.bf16_dot:.1f} |")
    if ceilings.gather is not None:
        values = [r.get("gather_bandwidth_gbs") for r in rooflines]
        table = rooflines[0].get("gather", {})
        footprint = ("bilinear gather, 4 corners of "
                     if table.get("footprint") == "bilinear"
                     else "random gather, ")
        out.append(f"| {footprint}{table.get('row_floats', '?')}-float "
                   f"rows of a {table.get('table_bytes', 0) / 2**20:.1f} MiB "
                   "table (GB/s) | "
                   + " | ".join(_fmt(v, ".1f") for v in values)
                   + f" | {ceilings.gather:.1f} |")
    balance = peak / bandwidth
    out.append("")
    out.append(f"Machine balance: {balance:.1f} FLOP/byte (kernels below it "
               "are memory-bound).")
    out.append("")
    out.append("| kernel | impl | median ms | GFLOP/s | GB/s | roofline ms "
               "(ceiling) | of roofline | of FMA peak | attn speed-up |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for name, records in rows.items():
        if not attn.get("available", False):
            out.append(f"| {name} | attn | not available "
                       f"({attn.get('reason', '?')}) | | | | | | |")
        for r in records:
            if "skipped" in r:
                out.append(f"| {name} | {r['impl']} | skipped: "
                           f"{r['skipped']} | | | | | | |")
                continue
            if "median_ms" not in r:
                out.append(f"| {name} | {r['impl']} | failed: "
                           f"{_first_line(r.get('error', '?'))[:120]} "
                           "| | | | | | |")
                continue
            flag = "" if r.get("agrees", True) else " (wrong result!)"
            if r.get("note"):
                flag += f" ({r['runs']} run{'s' if r['runs'] > 1 else ''})"
            out.append(
                f"| {name} | {r['impl']}{flag} | {r['median_ms']:.3f} | "
                f"{r['gflops']:.1f} | {r['gbs']:.1f} | "
                f"{r['roofline_ms']:.3f} ({r['ceiling']}) | "
                f"{100 * r['fraction_of_roofline']:.1f}% | "
                f"{100 * r['fraction_of_fma_peak']:.1f}% | "
                + (f"{r['attn_speedup']:.2f}x" if "attn_speedup" in r
                   else ("—" if r["impl"] == "attn" else "n/a")) + " |")
    gathered = [(name, r) for name, records in rows.items() for r in records
                if "fraction_of_gather_ceiling" in r]
    if gathered:
        out.append("")
        out.append("Deformable rows against the gather ceiling (their corner "
                   "reads, 4 x D values per sample, at the probe's gather "
                   "bandwidth):")
        out.append("")
        out.append("| kernel | impl | gathered MB | gather ceiling ms | "
                   "median ms | of gather ceiling |")
        out.append("|---|---|---:|---:|---:|---:|")
        for name, r in gathered:
            out.append(f"| {name} | {r['impl']} | "
                       f"{KERNELS_BY_NAME[name].gather_bytes / 1e6:.0f} | "
                       f"{r['gather_ceiling_ms']:.2f} | {r['median_ms']:.2f} | "
                       f"{100 * r['fraction_of_gather_ceiling']:.1f}% |")
    llc = max(r["stream"].get("llc_bytes", 0) for r in rooflines)
    above = [(KERNELS_BY_NAME[name], r) for name, records in rows.items()
             for r in records if r.get("fraction_of_roofline", 0) > 1]
    if above:
        # Nothing beats a true ceiling. Two ways past this one: a memory-bound
        # kernel whose data stays in the last-level cache between runs (the
        # stream and read ceilings are DRAM's), or ceilings measured low
        # because the machine was not idle.
        # A third, for a peer's compute-bound bf16 row: bf16 matrix
        # instructions the probe does not measure (oneDNN's AMX tiles on
        # Intel hosts: docs/performance.md, "Reduced precision").
        cached, matrix, other = [], [], []
        for k, r in above:
            if r["bound"] == "memory" and k.compulsory_bytes < llc:
                kind = cached
            elif k.dtype == "bf16" and r["impl"] != "attn":
                kind = matrix
            else:
                kind = other
            kind.append(f"{k.name} {r['impl']}")
        out.append("")
        if cached:
            out.append("**Above 100% of the roofline, memory-bound with data "
                       "in the last-level cache** (the stream and read "
                       "ceilings are DRAM bandwidth): " + ", ".join(cached)
                       + ".")
        if matrix:
            out.append("**Above 100% of the roofline, a peer's bf16 product** "
                       "(on bf16 matrix instructions the probe does not "
                       "measure, such as AMX tiles on Intel hosts): "
                       + ", ".join(matrix) + ".")
        if other:
            out.append("**Warning: above 100% of the roofline:** "
                       + ", ".join(other) + ". The probe measured the ceilings "
                       "low (the machine was not idle); these fractions are "
                       "not trustworthy.")
    for group in SUMMARY_PEERS:
        summary = group_summary(group, rows, verdicts)
        if summary:
            out.append("")
            title, not_applicable = SUMMARY_TITLES[group]
            peers = SUMMARY_PEERS[group]
            out.append(f"Group {group} ({title}), attn against "
                       + ", ".join(peers[:-1]) + " and " + peers[-1]
                       + f" (n/a: {not_applicable}):")
            out.append("")
            out.extend(summary)
    if verdicts:
        out.append("")
        out.append("| target | kernel | value | status |")
        out.append("|---|---|---:|---|")
    for v in verdicts:
        status = v["status"] + (f" ({v['note']})" if v.get("note") else "")
        out.append(f"| {v['target']} | {v['kernel']} | {_shown(v)} | "
                   f"{status} |")
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
    ceilings = Ceilings(rooflines)
    rows = build_rows(attn, peers, ceilings)
    verdicts = evaluate_targets(rows, attn.get("available", False),
                                attn.get("reason", ""))
    table = markdown(rows, verdicts, rooflines, ceilings, attn, meta)
    result = {
        "meta": meta,
        "roofline": {"runs": rooflines, "fma_peak_gflops": ceilings.peak,
                     "stream_bandwidth_gbs": ceilings.bandwidth,
                     "stream_kind": ceilings.stream_kind,
                     "read_bandwidth_gbs": ceilings.read,
                     "bf16_dot_peak_gflops": ceilings.bf16_dot},
        "kernels": [{"name": k.name, "family": k.family, "group": k.group,
                     "spec": str(k.spec.relative_to(k.spec.parents[2])),
                     "params": k.params, "grad": k.grad,
                     "forward": k.forward or None, "dtype": k.dtype,
                     "f32_twin": k.f32_twin or None, "flops": k.flops,
                     "compulsory_bytes": k.compulsory_bytes,
                     "flop_per_byte": k.intensity,
                     "memory_ceiling": k.memory_ceiling,
                     "compute_ceiling": k.compute_ceiling}
                    for k in KERNELS if k.name in rows],
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
