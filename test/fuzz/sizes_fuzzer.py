"""Random valid specs with dynamic dims, run on inputs of sizes that bend
or break the spec's shape rules.

A spec from specgen.py with a dynamic dim gets valid inputs (`attn-run
--random S --dynamic-size N --save-inputs`); then one dynamic dim of one
input takes another size (N ± 1, 1 or 2N) and fresh values. The reference
runtime decides whether the sizes are valid (it is the oracle, and shares
no code with codegen). The kernel must agree:
  - sizes the reference accepts: the kernel's values match it
    (`attn-run --check`, JIT, now and then AOT or the gradient);
  - sizes it refuses: the kernel refuses them too, with an error and exit
    code 1, never a result.
A finding is a crash, a hang, a kernel that accepts sizes the reference
refuses (a kernel that reads past a rule), a kernel that refuses sizes the
reference accepts, or a mismatch. Each is written as a spec with its
inputs (`<name>.mlir` and `<name>.inputs/`); `fuzz.py --replay` runs it.
"""

import os
import re
import shutil
import struct

import harness
import specgen
from npy_fuzzer import npy

RUN_TIMEOUT_S = 300
AOT_SHARE = 0.1
GRAD_SHARE = 0.3
# The element formats attn-run writes with --save-inputs (bf16 and f16
# inputs as f32); others (index scalars) keep their sizes.
CODES = {"<f2": "e", "<f4": "f", "<f8": "d"}
ARG = re.compile(r"%(\w+): tensor<([^>]*)>")
HEADER = re.compile(rb"'descr': '([^']*)'.*'shape': \(([^)]*)\)")


def dynamic_dims(spec_text):
    """[(argument name, dim)] of the first function's dynamic argument dims."""
    signature = spec_text.split("->", 1)[0]
    dims = []
    for name, type_text in ARG.findall(signature):
        for d, size in enumerate(type_text.split("x")[:-1]):
            if size == "?":
                dims.append((name, d))
    return dims


def read_header(path):
    """(descr, shape) of a .npy file attn-run wrote."""
    with open(path, "rb") as f:
        head = f.read(256)
    match = HEADER.search(head)
    shape = tuple(int(d) for d in match.group(2).decode().replace(",", " ").split())
    return match.group(1).decode(), shape


def write_random(path, descr, shape, rng):
    count = 1
    for d in shape:
        count *= d
    data = struct.pack(f"<{count}{CODES[descr]}", *[rng.random() for _ in range(count)])
    with open(path, "wb") as f:
        f.write(npy(shape, descr, data=data))


class SizesFuzzer(harness.Fuzzer):
    name = "sizes"

    def __init__(self, *args):
        super().__init__(*args)
        self.case = 0

    def spec_with_dynamic_dims(self):
        while True:
            spec = specgen.generate(self.rng, {})
            dims = dynamic_dims(spec.text)
            if spec.dynamic_size is not None and dims:
                return spec, dims

    def bent_inputs(self, spec, dims, folder, path):
        """Valid inputs in `folder`, then one dynamic dim resized; the
        `--input` arguments, or None when the spec gives no valid inputs."""
        shutil.rmtree(folder, ignore_errors=True)
        seed = str(self.rng.randrange(1 << 16))
        valid = [os.path.join(self.bin, "attn-run"), path, "--random", seed,
                 "--dynamic-size", str(spec.dynamic_size), "--save-inputs", folder,
                 "--reference", "--quiet"]
        if harness.run(valid, RUN_TIMEOUT_S)[0].kind != "ok":
            return None
        name, dim = self.rng.choice(dims)
        file = os.path.join(folder, f"{name}.npy")
        if not os.path.exists(file):
            return None
        descr, shape = read_header(file)
        if descr not in CODES:
            return None
        size = shape[dim]
        choices = sorted({size + 1, max(size - 1, 1), 1, 2 * size} - {size})
        shape = shape[:dim] + (self.rng.choice(choices),) + shape[dim + 1:]
        write_random(file, descr, shape, self.rng)
        return [a for n in sorted(os.listdir(folder)) if n.endswith(".npy")
                for a in ("--input", f"{n[:-4]}=%I/{n}")]

    def fuzz(self):
        path = os.path.join(self.work, "sizes.mlir")
        folder = os.path.join(self.work, "sizes.inputs")
        while self.stats.time_left() > 0:
            spec, dims = self.spec_with_dynamic_dims()
            with open(path, "w") as f:
                f.write(spec.text)
            inputs = self.bent_inputs(spec, dims, folder, path)
            if inputs is None:
                continue
            self.stats.inputs += 1
            mode = []
            if spec.differentiable and self.rng.random() < GRAD_SHARE:
                mode = ["--grad", "--random", "1"]
            reference_args = inputs + ["--reference"] + mode
            if self.rng.random() < AOT_SHARE:
                mode.append("--aot")
            reference = run_sizes(self.bin, path, folder, reference_args)
            if reference.finding:
                self.stats.count(reference)
                self.report(reference, spec, folder, reference_args, "ok")
                continue
            valid = reference.kind == "ok"
            # Valid sizes: the kernel against the reference; invalid: the
            # kernel alone, which must refuse them.
            args = inputs + (["--check"] if valid else []) + mode
            kernel = run_sizes(self.bin, path, folder, args)
            if valid and kernel.kind == "rejected":
                kernel.kind = "rejects-valid"
                kernel.signature = f"rejects-valid {spec.family}: {first_error(kernel.output)}"
            elif not valid and kernel.kind == "ok":
                kernel.kind = "accepts-invalid"
                kernel.signature = (f"accepts-invalid {spec.family}: the reference says "
                                    + first_error(reference.output))
            elif kernel.finding:
                kernel.signature = f"{kernel.signature} {spec.family}"
            self.stats.count(kernel)
            if kernel.finding:
                self.report(kernel, spec, folder, args, "ok" if valid else "error")

    def report(self, outcome, spec, folder, args, expect):
        """Records the spec with its RUN line, its inputs next to it."""
        path = self.stats.record(
            outcome, f"sizes-{spec.family}",
            f"// RUN: {' '.join(['attn-run', '%s', '--quiet'] + args)}\n"
            f"// EXPECT: {expect}\n{spec.text}", "mlir")
        if path:
            target = os.path.splitext(path)[0] + ".inputs"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(folder, target)


def run_sizes(bin_dir, path, folder, args):
    """attn-run on the spec, `%I` in `args` being the inputs' folder."""
    return harness.run([os.path.join(bin_dir, "attn-run"), path, "--quiet"]
                       + [a.replace("%I", folder) for a in args], RUN_TIMEOUT_S)[0]


def first_error(output):
    """The first diagnostic, numbers and names blanked (a signature)."""
    error = re.search(r"error: (.*)", output)
    return re.sub(r"\d+|%\w+|@\w+", "N", error.group(1) if error else "")[:100]
