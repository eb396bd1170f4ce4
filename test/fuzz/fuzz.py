#!/usr/bin/env python3
"""The fuzzers of attn (docs/reliability.md), and the replay of what they
found.

    fuzz.py --bin build/bin --seconds 600              # every fuzzer, 600 s each
    fuzz.py --bin build/bin --seconds 60 --only npy --seed 7
    fuzz.py --bin build/bin --replay                   # the regression corpus

Fuzzers (one module each):
  specs         mutated specs -> attn-opt (parser, verifiers, every pipeline),
                and the verified ones -> attn-run (spec_fuzzer.py)
  npy           mutated .npy files -> attn-run's loader (npy_fuzzer.py)
  differential  random valid specs -> JIT kernels and gradient kernels
                against the reference runtime (differential.py)
  sizes         random valid specs with dynamic dims, on inputs whose sizes
                bend or break the shape rules -> the kernel must accept
                exactly what the reference accepts (sizes_fuzzer.py)

Each finding (a crash, a hang, an error with no diagnostic, a kernel that
disagrees with the reference, a valid spec rejected) is written, minimized
where that is cheap, to the regression corpus test/fuzz/regressions/<fuzzer>/
(or --findings DIR); `--replay` runs every entry there and fails if one is
still a finding, unless regressions/XFAIL lists it. The exit code is 1 if
anything was found.
"""

import argparse
import os
import random
import re
import shlex
import shutil
import sys
import tempfile

import harness
import npy_fuzzer
from differential import DifferentialFuzzer
from sizes_fuzzer import SizesFuzzer
from spec_fuzzer import SpecFuzzer

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
FUZZERS = {f.name: f for f in (SpecFuzzer, npy_fuzzer.NpyFuzzer, DifferentialFuzzer,
                                SizesFuzzer)}
REPLAY_TIMEOUT_S = 300


def replay_entry(bin_dir, path):
    """The findings an entry still gives (empty once fixed)."""
    if path.endswith(".npy"):
        return [o for o in npy_fuzzer.replay(bin_dir, path)
                if o.kind in harness.CRASH_KINDS]
    with open(path, errors="replace") as f:
        text = f.read()
    run = re.search(r"^// RUN: (.*)$", text, re.M)
    if not run:
        return [harness.Outcome("crash", [path], "no `// RUN:` line", "malformed entry")]
    # %I: the entry's inputs, in <entry>.inputs/ (the sizes fuzzer).
    inputs = os.path.splitext(path)[0] + ".inputs"
    args = [path if a == "%s" else a.replace("%I", inputs)
            for a in shlex.split(run.group(1))]
    args[0] = os.path.join(bin_dir, args[0])
    outcome, _ = harness.run(args, REPLAY_TIMEOUT_S)
    if re.search(r"^// EXPECT: ok$", text, re.M):
        return [] if outcome.kind == "ok" else [outcome]
    if re.search(r"^// EXPECT: error$", text, re.M):
        return [] if outcome.kind == "rejected" else [outcome]
    return [outcome] if outcome.kind in harness.CRASH_KINDS else []


def known_signatures(bin_dir, fuzzer):
    """The findings of the entries XFAIL lists for `fuzzer`, which the
    fuzzer then does not report again."""
    return {outcome.signature
            for key in harness.expected_failures() if key.startswith(fuzzer + "/")
            for outcome in replay_entry(bin_dir, os.path.join(harness.REGRESSIONS, key))}


def replay(bin_dir, only):
    """Replays the regression corpus; returns the number of failures."""
    xfail = harness.expected_failures()
    entries = failures = 0
    for fuzzer in sorted(only):
        folder = os.path.join(harness.REGRESSIONS, fuzzer)
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if not name.endswith((".mlir", ".npy")):
                continue
            entries += 1
            key = f"{fuzzer}/{name}"
            found = replay_entry(bin_dir, os.path.join(folder, name))
            if bool(found) == (key in xfail):
                print(f"{'XFAIL' if found else 'PASS'}: {key}")
                continue
            failures += 1
            if found:
                print(f"FAIL: {key}")
                for outcome in found:
                    print(f"  {outcome.kind}: $ {shlex.join(outcome.args)}")
                    print(harness.excerpt(outcome.output))
            else:
                print(f"XPASS: {key} (fixed: remove it from regressions/XFAIL)")
    print(f"replay: {entries} entries, {failures} failures")
    return failures


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="directory of attn-opt and attn-run")
    parser.add_argument("--seconds", type=float, default=60, help="per fuzzer")
    parser.add_argument("--only", action="append", choices=sorted(FUZZERS),
                        help="run only this fuzzer (repeatable)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="parallel kernels of the differential fuzzer")
    parser.add_argument("--findings", help="write reproducers here instead of "
                        "the regression corpus (one folder per fuzzer)")
    parser.add_argument("--replay", action="store_true",
                        help="replay the regression corpus instead of fuzzing")
    args = parser.parse_args()
    only = args.only or list(FUZZERS)
    if args.replay:
        return 1 if replay(args.bin, only) else 0

    work = tempfile.mkdtemp(prefix="attn-fuzz-")
    # attn-run reads a tuning cache by default: the fuzzers use none of the
    # user's.
    os.environ["XDG_CACHE_HOME"] = os.path.join(work, "xdg-cache")
    findings = 0
    try:
        for name in only:
            rng = random.Random(f"{args.seed}/{name}")
            stats = harness.Stats(name, os.path.join(args.findings or harness.REGRESSIONS, name),
                                  args.seconds)
            stats.known = known_signatures(args.bin, name)
            extra = {"jobs": args.jobs} if name == "differential" else {}
            print(f"fuzz {name}: {args.seconds:.0f} s, seed {args.seed}", flush=True)
            FUZZERS[name](args.bin, ROOT, rng, stats, work, **extra).fuzz()
            print(stats.summary(), flush=True)
            for note, count in sorted(stats.notes.items()):
                print(f"  note ({count}x): {note}")
            findings += len(stats.findings)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
