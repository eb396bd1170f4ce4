"""Random valid specs (specgen.py) as JIT kernels against the reference.

Each spec runs `attn-run --random S [--dynamic-size N] --check`: the kernel
after the default pipeline, or after the exact rewrites, the lowerings or
none, now and then with random schedule knobs or for AVX2; where the
function differentiates, its gradient kernel too (`--grad --check`), and
for small smooth functions the reference gradient against finite
differences (`--check-grad`); gradients now and then with saved statistics
(`--grad-save-statistics`), and a tenth of the runs ahead of time
(`--aot`). A finding is a crash, a hang, a result beyond
the tolerance attn-run uses (1e-4 relative; derived for bf16 and f16), or a
valid spec that the tools reject.
"""

import concurrent.futures
import os
import random
import re
import shlex
import subprocess
import sys

import harness
import specgen

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "sweep"))
import sweep  # noqa: E402  (the thresholds, as the shape sweep reads them)

RUN_TIMEOUT_S = 300
# Threshold probes beyond this size cost more than specgen.MAX_MACS anyway.
MAX_PROBE = 4200
PIPELINES = [
    (None, 12),
    ("canonicalize,attn-reassociate{force=true},canonicalize,cse", 3),
    ("attn-lower-double-norm,attn-lower-deformable,canonicalize,cse", 2),
    ("", 2),  # --no-default-pipeline
]
KNOB_GROUPS = ("gemm", "reduction", "attention", "attentionGrad", "chunkedProduct",
               "elementwise")
KNOB_VALUES = [0, 1, 2, 4, 8, 16, 32, 64, 128, 256, 1024]
# AOT compiles and links a library per run (seconds): a sample of the runs.
AOT_SHARE = 0.1
# A mismatch whose f64 twin is exact is put down to conditioning only while
# this small; a wrong kernel is usually wrong by far more.
MAX_PRECISION_ERROR = 1e-2
# Rejections of valid specs that are documented limits, not bugs.
EXPECTED_REJECTIONS = [
    # docs/training.md: its primitive form needs static shapes.
    r"no adjoint rule for 'attn\.bilinear_gather' with dynamic sizes",
]


def thresholds_by_axis(bin_dir):
    """Sizes around every size where codegen changes form, by axis (the
    shape sweep's probes)."""
    thresholds = sweep.print_thresholds(bin_dir, "host")["thresholds"]
    axes = {axis for t in thresholds for axis in t["axes"]}
    return {axis: sorted(sweep.probe_sizes(thresholds, axis, MAX_PROBE)) for axis in axes}


def schedule_knobs(bin_dir, work_dir):
    """The knob names attn-run lists when given one it does not know."""
    path = os.path.join(work_dir, "knobs.mlir")
    with open(path, "w") as f:
        f.write(specgen.generate(random.Random(0), {}, "matmul").text)
    out = subprocess.run([os.path.join(bin_dir, "attn-run"), path, "--random", "1",
                          "--schedule-param", "none.none=1"], capture_output=True,
                         text=True).stderr
    return [k for k in re.findall(r"(\w+)\.(\w+)", out.split("one of", 1)[-1])
            if k[0] in KNOB_GROUPS]


class DifferentialFuzzer(harness.Fuzzer):
    name = "differential"

    def __init__(self, *args, jobs=2):
        super().__init__(*args)
        self.jobs = jobs
        self.probes = thresholds_by_axis(self.bin)
        self.knobs = schedule_knobs(self.bin, self.work)
        self.avx512 = sweep.host_has_avx512()
        self.count = 0

    def runs_of(self, rng, spec, path):
        """The attn-run commands of one spec."""
        base = [os.path.join(self.bin, "attn-run"), path, "--random",
                str(rng.randrange(1 << 16)), "--quiet"]
        if spec.dynamic_size is not None:
            base += ["--dynamic-size", str(spec.dynamic_size)]
        forward = base + ["--check"]
        pipeline = rng.choices([p for p, _ in PIPELINES], [w for _, w in PIPELINES])[0]
        if pipeline == "":
            forward.append("--no-default-pipeline")
        elif pipeline:
            forward += ["--pass-pipeline", pipeline]
        if self.knobs and rng.random() < 0.2:
            knobs = rng.sample(self.knobs, rng.randint(1, 3))
            forward += ["--schedule-param", ",".join(
                f"{g}.{n}={rng.choice(KNOB_VALUES)}" for g, n in knobs)]
        if self.avx512 and rng.random() < 0.1:
            forward += ["--target", sweep.NARROW_TARGET]
        # Ahead of time (a static library and header linked as an app would)
        # now and then: the same kernel behind the AOT calling convention.
        elif rng.random() < AOT_SHARE:
            forward.append("--aot")
        runs = [forward]
        if spec.differentiable and rng.random() < 0.7:
            grad = base + ["--grad", "--check"]
            # The forward that saves statistics and the gradient that takes
            # them (docs/training.md) are other IR than the recomputing pair.
            if rng.random() < 0.5:
                grad.append("--grad-save-statistics")
            if rng.random() < AOT_SHARE:
                grad.append("--aot")
            runs.append(grad)
        if spec.check_grad and rng.random() < 0.3:
            runs.append(base + ["--check-grad"])
        return runs

    def one(self, index, seed):
        """Generates spec `index` from `seed` and runs it (in a worker)."""
        rng = random.Random(seed)
        spec = specgen.generate(rng, self.probes)
        path = os.path.join(self.work, f"diff{index % (2 * self.jobs)}.mlir")
        with open(path, "w") as f:
            f.write(spec.text)
        results = []
        for args in self.runs_of(rng, spec, path):
            outcome, _ = harness.run(args, RUN_TIMEOUT_S)
            outcome.exact_twin = outcome.kind == "mismatch" and self.f64_twin_matches(
                spec, args, path.replace(".mlir", "-f64.mlir"))
            results.append((spec, args, outcome))
        return results

    def f64_twin_matches(self, spec, args, path):
        """Whether the same spec in f64 matches the reference to 1e-9: then
        the f32 (or 16-bit) mismatch is the function's conditioning (its
        result cancels terms far larger than itself), not the kernel's
        logic."""
        text = re.sub(r"x(?:bf16|f16|f32)>", "xf64>", spec.text)
        if text == spec.text:
            return False
        with open(path, "w") as f:
            f.write(text)
        twin = [path if a == args[1] else a for a in args] + ["--tolerance", "1e-9"]
        return harness.run(twin, RUN_TIMEOUT_S)[0].kind == "ok"

    def judge(self, spec, args, outcome):
        self.stats.count(outcome)
        mode = ("check-grad" if "--check-grad" in args else "grad" if "--grad" in args
                else "forward")
        if outcome.kind == "rejected":
            error = re.search(r"error: (.*)", outcome.output)
            message = error.group(1) if error else ""
            if "--schedule-param" in args and "--schedule-param" in message:
                return  # a knob value out of its range
            if any(re.search(p, message) for p in EXPECTED_REJECTIONS):
                self.stats.note(f"{spec.family} {mode}: {message[:100]}")
                return
            outcome.kind = "rejected-valid"
            outcome.signature = (f"rejected-valid {spec.family} {mode}: "
                                 + re.sub(r"\d+|%\w+|@\w+", "N", message)[:100])
        elif outcome.kind == "mismatch" and outcome.exact_twin:
            error = re.search(r"max rel err (?:= )?([-+.\w]+)", outcome.output)
            if error and float(error.group(1)) < MAX_PRECISION_ERROR:
                self.stats.note(f"{spec.family} {mode}: the f64 twin matches; "
                                "the f32/16-bit error is the function's conditioning",
                                f"$ {shlex.join(args)}\n{spec.text}{error.group(0)}")
                return
        if outcome.finding and outcome.kind != "rejected-valid":
            outcome.signature = f"{outcome.kind} {spec.family} {mode} {outcome.signature}"
        if outcome.finding:
            run_line = shlex.join(["attn-run", "%s"] + args[2:])
            self.stats.record(outcome, f"diff-{spec.family}",
                              f"// RUN: {run_line}\n// EXPECT: ok\n" + spec.text, "mlir")

    def fuzz(self):
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            pending = set()
            while self.stats.time_left() > 0 or pending:
                while self.stats.time_left() > 0 and len(pending) < self.jobs:
                    pending.add(pool.submit(self.one, self.count, self.rng.randrange(1 << 30)))
                    self.count += 1
                done, pending = concurrent.futures.wait(
                    pending, return_when=concurrent.futures.FIRST_COMPLETED)
                for future in done:
                    self.stats.inputs += 1
                    for spec, args, outcome in future.result():
                        self.judge(spec, args, outcome)
