#!/usr/bin/env python3
"""Assembles every .ptx file given (or found in given directories) with the
CUDA toolkit's ptxas and prints, per kernel, its registers, shared memory and
spills:

  ptx_report.py --gpu-name sm_80 out/           # out/*.ptx from attn-compile --emit ptx
  kernel <file>:<kernel> regs <R> static shared <S> bytes spill stores <B> loads <B>

Halide sizes shared memory at launch (dynamic shared memory), which ptxas
does not see: "static shared" is 0 for Halide kernels; the .stmt shows the
per-block allocations.

Exits 1 if ptxas rejects any file (its message is printed), 2 on bad usage.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

FUNCTION = re.compile(r"Compiling entry function '([^']+)'")
USAGE = re.compile(r"Used (\d+) registers")
SHARED = re.compile(r"(\d+) bytes smem")
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")


def report(ptxas, gpu, path):
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run(
            [ptxas, "--gpu-name", gpu, "-v", path, "-o",
             os.path.join(tmp, "out.cubin")],
            capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(f"ptxas rejected {path} for {gpu}:\n{result.stderr}")
        return False
    kernel, stats = None, {}
    rows = []
    for line in result.stderr.splitlines():
        if m := FUNCTION.search(line):
            kernel, stats = m.group(1), {"regs": 0, "shared": 0,
                                         "stores": 0, "loads": 0}
            rows.append((kernel, stats))
        if kernel is None:
            continue
        if m := SPILLS.search(line):
            stats["stores"], stats["loads"] = int(m.group(1)), int(m.group(2))
        if m := USAGE.search(line):
            stats["regs"] = int(m.group(1))
            if s := SHARED.search(line):
                stats["shared"] = int(s.group(1))
    if not rows:
        sys.stderr.write(f"{path}: ptxas compiled no entry function\n")
        return False
    name = os.path.basename(path)
    for kernel, s in rows:
        print(f"kernel {name}:{kernel} regs {s['regs']} static shared {s['shared']} "
              f"bytes spill stores {s['stores']} loads {s['loads']}")
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help=".ptx files or directories")
    parser.add_argument("--gpu-name", required=True, help="e.g. sm_80, sm_90")
    parser.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    args = parser.parse_args()
    files = []
    for path in args.paths:
        if os.path.isdir(path):
            files += sorted(glob.glob(os.path.join(path, "*.ptx")))
        else:
            files.append(path)
    if not files:
        parser.error("no .ptx files in " + " ".join(args.paths))
    if not os.access(args.ptxas, os.X_OK):
        parser.error(f"no ptxas at {args.ptxas}")
    ok = all([report(args.ptxas, args.gpu_name, f) for f in files])
    print(f"ptxas {args.gpu_name}: {len(files)} files, "
          f"{'all assembled' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
