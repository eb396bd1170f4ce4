#!/usr/bin/env python3
"""Where a kernel's time goes, loop by loop: samples of the AOT kernel
(perf) mapped onto its machine code.

    python3 bench/loop_profile.py SPEC [--grad] [--grad-save-statistics]
        [--schedule-param K=V ...] [--runs N] [--top K] [--bin DIR]

Runs `attn-run SPEC --aot --aot-dir TMP --random 1 --bench N`
(HL_NUM_THREADS=2) under `perf record -e cpu-clock`, which keeps the
shared object that ran in TMP, disassembles that object, and prints:

  - each function of the kernel (a parallel loop body is a function of its
    own) with its share of the kernel's samples;
  - the --top basic blocks (from a jump target or the instruction after a
    jump up to the next jump, so a loop body is one block): their share,
    offset in their function, length, the function, and their most
    frequent instructions, so a register-tile loop (16 vfmadd231ps) tells
    itself apart from an exp, a copy or a reduction.

Shares are of the samples that fall in the kernel's shared object: the JIT
compile and the reference that attn-run also runs are left out. Needs
`perf` (Debian: linux-perf) and `objdump`; a virtual machine without
hardware counters is fine (cpu-clock is a software event). Used in
docs/performance.md ("Where softmax attention's time goes").
"""

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        sys.exit(f"loop_profile: {' '.join(map(str, command))} failed "
                 f"(exit {result.returncode}):\n{result.stderr.strip()}")
    return result.stdout


def kernel_flags(args):
    """The flags that pick the kernel to run."""
    flags = ["--grad"] if args.grad else []
    if args.grad_save_statistics:
        flags.append("--grad-save-statistics")
    for param in args.schedule_param:
        flags += ["--schedule-param", param]
    if args.func:
        flags += ["--func", args.func]
    return flags


def sample(args, bin_dir, work):
    """Runs the kernel under perf with its AOT files kept in `work`
    (attn-run --aot-dir); returns the shared object that ran and its
    samples, {(function, offset): samples}."""
    spec = Path(args.spec)
    if not spec.is_file():
        sys.exit(f"loop_profile: no spec file {args.spec}")
    names = re.findall(r"func\.func\s+@([\w$.]+)", spec.read_text())
    if not names or (args.func and args.func not in names):
        sys.exit(f"loop_profile: {spec.resolve()} has no function "
                 f"@{args.func or '(none)'}; it has: "
                 f"{', '.join('@' + n for n in names) or 'none'}")
    data = work / "perf.data"
    run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4999", "-o",
         str(data), str(bin_dir / "attn-run"), str(spec), "--aot",
         "--aot-dir", str(work), "--random", "1", "--bench", str(args.runs),
         "--quiet"] + kernel_flags(args),
        env=dict(os.environ, HL_NUM_THREADS=str(args.threads)))
    libraries = list(work.glob("*_grad.so" if args.grad else "*.so"))
    if len(libraries) != 1:
        sys.exit(f"loop_profile: attn-run left {len(libraries)} kernel "
                 f"objects in its --aot-dir, not one")
    library = libraries[0]
    script = run(["perf", "script", "-i", str(data), "-F", "ip,sym,symoff,dso"])
    counts = collections.Counter()
    for line in script.splitlines():
        match = re.match(r"\s*[0-9a-f]+\s+(\S+)\+0x([0-9a-f]+)\s+\((.*)\)",
                         line)
        if match and Path(match.group(3)) == library:
            counts[(match.group(1), int(match.group(2), 16))] += 1
    return library, counts


def basic_blocks(library):
    """[(function, [(offset in the function, instruction)])]: the basic
    blocks of the disassembly, each from a jump target or the instruction
    after a jump up to the next jump or return (a loop's body is one
    block)."""
    text = run(["objdump", "-d", "--no-show-raw-insn", str(library)])
    code = []  # (function, address, instruction)
    function = None
    for line in text.splitlines():
        header = re.match(r"^[0-9a-f]+ <(.*)>:", line)
        if header:
            function = header.group(1)
            continue
        match = re.match(r"^\s+([0-9a-f]+):\s+(\S.*)", line)
        if match:
            code.append((function, int(match.group(1), 16), match.group(2)))
    targets = {int(target, 16) for _, _, text in code
               for target in re.findall(r"^j\w+\s+([0-9a-f]+) <", text)}
    first = {}
    for function, address, _ in code:
        first.setdefault(function, address)
    blocks, block = [], []
    for index, (function, address, text) in enumerate(code):
        starts = (address in targets or not block
                  or block[-1][1].startswith(("j", "ret"))
                  or code[index - 1][0] != function)
        if starts and block:
            blocks.append((code[index - 1][0], block))
            block = []
        block.append((address - first[function], text))
    if block:
        blocks.append((code[-1][0], block))
    return blocks


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("spec")
    parser.add_argument("--func", help="the function of SPEC (default: the "
                        "first)")
    parser.add_argument("--grad", action="store_true",
                        help="profile the gradient kernel @f_grad")
    parser.add_argument("--grad-save-statistics", action="store_true")
    parser.add_argument("--schedule-param", action="append", default=[],
                        help="a knob for both compiles (repeatable)")
    parser.add_argument("--runs", type=int, default=100,
                        help="attn-run --bench runs to sample (default 100)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--top", type=int, default=12,
                        help="basic blocks to list (default 12)")
    parser.add_argument("--bin", default=str(ROOT / "build" / "bin"),
                        help="directory of attn-run")
    args = parser.parse_args()
    for tool in ("perf", "objdump"):
        if shutil.which(tool) is None:
            sys.exit(f"loop_profile: needs `{tool}` on PATH"
                     + (" (Debian: linux-perf)" if tool == "perf" else ""))
    if args.runs < 1 or args.top < 1 or args.threads < 1:
        sys.exit("loop_profile: --runs, --top and --threads must be positive")
    bin_dir = Path(args.bin)
    with tempfile.TemporaryDirectory(prefix="attn-loop-profile-") as tmp:
        work = Path(tmp)
        library, counts = sample(args, bin_dir, work)
        blocks = basic_blocks(library)
    total = sum(counts.values())
    if total == 0:
        sys.exit("loop_profile: no samples fell in the kernel (too few "
                 "--runs?)")
    print(f"{library.name}: {total} samples in the kernel "
          f"({args.runs} runs, {args.threads} threads)\n")
    per_function = collections.Counter()
    rows = []
    for function, block in blocks:
        hits = sum(counts[(function, offset)] for offset, _ in block)
        if not hits:
            continue
        per_function[function] += hits
        mix = collections.Counter(text.split()[0] for _, text in block)
        rows.append((hits, function, block[0][0], len(block), mix))
    print("| function | share |\n|---|---:|")
    for function, hits in per_function.most_common():
        if hits / total >= 0.001:
            print(f"| {function} | {100 * hits / total:.1f}% |")
    print(f"\n| share | block | instructions | function | most frequent |\n"
          "|---:|---|---:|---|---|")
    for hits, function, address, length, mix in sorted(
            rows, key=lambda row: -row[0])[:args.top]:
        common = ", ".join(f"{op} {n}" for op, n in mix.most_common(5))
        print(f"| {100 * hits / total:.1f}% | 0x{address:x} | {length} | "
              f"{function} | {common} |")


if __name__ == "__main__":
    main()
