"""Compares two bench runs, kernel by kernel: the regression guard.

    python3 bench/compare.py NEW.json EARLIER.json [--markdown-out FILE]
    bench/run.sh --compare EARLIER.json     (the same, after the run)

For every (kernel, implementation) in both runs it prints the fraction of
the roofline each run reached and their ratio. Fractions, not times: each
run divides by the ceilings its own probe measured, so two hosts, or one
host on two days, compare as well as they can. A drop is flagged when the
new fraction is below the earlier one by more than the noise: the larger
spread of the per-round medians (max / min - 1) of the two runs, and at
least NOISE_FLOOR (rounds of one run share interference a single run cannot
see). attn's drop is put down to the host when the kernel's peers (the
median of their ratios) dropped as much: their code did not change. Exit
status 1 when attn drops beyond the noise and beyond its peers anywhere.
"""
import argparse
import json
import sys

# The smallest drop flagged: two quiet runs of unchanged code on one host
# differ by up to ~3% (docs/performance.md, "Comparing runs").
NOISE_FLOOR = 0.03


def load_fractions(path):
    """{(kernel, impl): (fraction of roofline, round spread)} of a run."""
    data = json.load(open(path))
    table = {}
    for result in data["results"]:
        fraction = result.get("fraction_of_roofline")
        if fraction is None:
            continue
        medians = result.get("round_medians_ms") or [result["median_ms"]]
        spread = max(medians) / min(medians) - 1.0 if min(medians) > 0 else 0.0
        table[(result["kernel"], result["impl"])] = (fraction, spread)
    return data["meta"], table


def compare(new_path, earlier_path):
    """Rows (kernel, impl, earlier, new, ratio, noise, verdict) and both
    runs' metadata. verdict: "" (within the noise), "drop", or, for attn,
    "drop, peers too" when the peers of the kernel dropped as much (the
    host was slower, not attn's code)."""
    new_meta, new = load_fractions(new_path)
    earlier_meta, earlier = load_fractions(earlier_path)
    measured = {}
    for key in sorted(set(new) & set(earlier)):
        (fraction, spread), (before, spread_before) = new[key], earlier[key]
        noise = max(spread, spread_before, NOISE_FLOOR)
        ratio = fraction / before if before > 0 else float("inf")
        measured[key] = (before, fraction, ratio, noise)
    rows = []
    for (kernel, impl), (before, fraction, ratio, noise) in measured.items():
        verdict = "drop" if ratio < 1.0 - noise else ""
        peers = sorted(r for (k, i), (_, _, r, _) in measured.items()
                       if k == kernel and i != "attn")
        if verdict and impl == "attn" and peers and \
                ratio >= peers[len(peers) // 2] * (1.0 - noise):
            verdict = "drop, peers too"
        rows.append((kernel, impl, before, fraction, ratio, noise, verdict))
    return rows, new_meta, earlier_meta


def describe(meta):
    return (f"{meta['stamp']} (commit {meta['commit']}, "
            f"{meta['machine']['cpu']}, other processes "
            f"{100 * meta.get('other_processes_share_of_cores', 0):.0f}% "
            f"of the cores)")


def markdown(rows, new_meta, earlier_meta):
    lines = [f"Fraction of the roofline, this run {describe(new_meta)} "
             f"against {describe(earlier_meta)}:", "",
             "| kernel | impl | earlier | now | now / earlier | noise | |",
             "|---|---|---:|---:|---:|---:|---|"]
    for kernel, impl, before, now, ratio, noise, verdict in rows:
        verdict = f"**{verdict}**" if verdict == "drop" else verdict
        lines.append(f"| {kernel} | {impl} | {100 * before:.1f}% | "
                     f"{100 * now:.1f}% | {ratio:.3f} | ±{100 * noise:.1f}% | "
                     f"{verdict} |")
    if not rows:
        lines.append("| (no kernel is in both runs) | | | | | | |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("new", help="this run's bench/results/<stamp>.json")
    parser.add_argument("earlier", help="the run to compare with")
    parser.add_argument("--markdown-out", help="also write the table here")
    options = parser.parse_args()
    try:
        rows, new_meta, earlier_meta = compare(options.new, options.earlier)
    except (OSError, ValueError, KeyError) as error:
        sys.exit(f"compare: cannot read the runs: {error!r}")
    text = markdown(rows, new_meta, earlier_meta)
    print(text, end="")
    if options.markdown_out:
        with open(options.markdown_out, "w") as out:
            out.write(text)
    drops = [r for r in rows if r[6] == "drop" and r[1] == "attn"]
    if drops:
        names = ", ".join(r[0] for r in drops)
        print(f"compare: attn dropped beyond the noise on: {names}",
              file=sys.stderr)
        sys.exit(1)
    if not rows:
        sys.exit("compare: no kernel is in both runs")


if __name__ == "__main__":
    main()
