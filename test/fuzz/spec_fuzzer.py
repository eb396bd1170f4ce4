"""Mutated specs through the parser, the verifiers and every pass pipeline.

Seeds are every spec of examples/ and test/ (split at `// -----`), the
regression corpus and specs from specgen.py. A mutant is a seed after one to
four text mutations (numbers and dims replaced by boundary values, keywords
swapped, element types changed, SSA names crossed, lines deleted,
duplicated or spliced from other seeds, bytes flipped). Mutants run in
batches through `attn-opt --split-input-file` (one process for many
inputs), each batch on one pipeline; a batch that fails is rerun one mutant
at a time to find the culprit. Every mutant that attn-opt prints is parsed
again (the printer must write what the parser reads) and becomes a seed
itself; a share of them also compile and run (`attn-run --check`), where
only crashes and hangs count.
"""

import glob
import os
import re
import shlex
import time

import harness
import specgen

SPLIT = "// -----"
BATCH = 48
BATCH_TIMEOUT_S = 120
ONE_TIMEOUT_S = 30
RUN_TIMEOUT_S = 120
# Of the fuzzer's time, the share spent compiling and running mutants (the
# rest goes to attn-opt, many inputs per process).
RUN_SHARE = 0.3
MAX_SEEDS = 4000
PIPELINES = [
    [],  # parse, verify and print
    ["--attn-default-pipeline"],
    ["--attn-reassociate=force=true explain=true"],
    ["--attn-reassociate=allow-softmax-approximation=true chunk-size=3"],
    ["--attn-grad"],
    ["--attn-grad", "--attn-reassociate=force=true"],
    ["--attn-grad=primitive-deformable=true", "--canonicalize", "--cse"],
    ["--attn-grad", "--attn-default-pipeline"],
    ["--attn-lower-double-norm", "--attn-lower-deformable", "--canonicalize", "--cse"],
    ["--attn-widen-to-f32", "--attn-cost"],
    ["--canonicalize", "--cse", "--attn-cost"],
]
INTERESTING_NUMBERS = [
    "0", "1", "2", "3", "-1", "-2", "7", "63", "64", "65", "127", "128", "255", "256",
    "1023", "1024", "2049", "4097", "65535", "65536", "2147483647", "2147483648",
    "4294967296", "9223372036854775807", "9223372036854775808", "99999999999999999999",
    "0.0", "-0.0", "1.0e-45", "3.4e+38", "1.0e+39", "-1.0e+308", "1.0e+309", "0x7FC00000",
    "0x7F800000", "0xFF800000", "1.5", "-0.5", "1.0e-9",
]
ELEMENT_TYPES = ["f32", "f16", "bf16", "f64", "i32", "i1", "index", "f8E4M3FN",
                 "complex<f32>", "tf32", "f80"]
EXTRA_WORDS = [
    "attn.no_grad", "attn.weight", "attn.allow_approximation", "attn.gradient_of",
    "causal", "mask", "scale", "feature_map", "align_corners", "transpose_lhs",
    "transpose_rhs", "exclusive", "reverse", "eps", "dim", "fill", "like", "by",
    "levels", "variant", "norm", "over", "keys", "queries", "softmax", "sum", "count",
    "none", "identity", "relu", "elu_plus_one", "scaling", "tensor", "memref", "vector",
    "func.call", "scf.if", "arith.constant", "tensor.empty", "tensor.extract_slice",
]
TOKEN = re.compile(r"%[\w.#]+|@\w+|[A-Za-z_][\w.]*|-?\d+(?:\.\d+)?(?:e[+-]?\d+)?|\S")
SHAPE = re.compile(r"tensor<([^<>]*)>")


def load_seeds(root):
    """Every spec of examples/ and test/, split into its cases, but for the
    known failures (regressions/XFAIL): each mutant of one would be a known
    finding again, and an expensive one."""
    seeds = []
    paths = sorted(glob.glob(os.path.join(root, "examples", "**", "*.mlir"), recursive=True) +
                   glob.glob(os.path.join(root, "test", "**", "*.mlir"), recursive=True))
    known = {os.path.join(harness.REGRESSIONS, key) for key in harness.expected_failures()}
    for path in paths:
        if os.path.abspath(path) in known:
            continue
        with open(path, errors="replace") as f:
            text = f.read()
        for case in re.split(r"^// -----.*$", text, flags=re.M):
            if "func.func" in case or "attn." in case:
                seeds.append(case.strip() + "\n")
    return seeds


class Mutator:
    """Text mutations of a spec; draws words and lines from the seeds."""

    def __init__(self, rng, seeds):
        self.rng = rng
        words = set(EXTRA_WORDS)
        for seed in seeds[:2000]:
            words.update(re.findall(r"[A-Za-z_][\w.]*", seed))
        self.words = sorted(words)
        self.seeds = seeds

    def mutate(self, text):
        for _ in range(self.rng.choice([1, 1, 2, 2, 3, 4])):
            mutation = self.rng.choice(self.MUTATIONS)
            text = mutation(self, text)
        # A mutant never splits itself (attn-opt --split-input-file).
        return "\n".join(l for l in text.split("\n") if not l.startswith(SPLIT)) + "\n"

    def replace_token(self, text, pattern, choose):
        matches = list(re.finditer(pattern, text))
        if not matches:
            return text
        m = self.rng.choice(matches)
        return text[:m.start()] + choose(m.group(0)) + text[m.end():]

    def number(self, text):
        matches = list(re.finditer(r"(?<![\w.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?", text))
        if not matches:
            return text
        m = self.rng.choice(matches)
        # A result number (%0#N) stays small: a huge one makes the upstream
        # parser abort (regressions/XFAIL), which costs a bisection each time.
        if text[m.start() - 1:m.start()] == "#":
            value = str(self.rng.randrange(8))
        else:
            value = self.rng.choice(INTERESTING_NUMBERS)
        return text[:m.start()] + value + text[m.end():]

    def dim(self, text):
        """A dim of a tensor type: `?`, a boundary value, one more or one
        fewer dim."""
        matches = list(SHAPE.finditer(text))
        if not matches:
            return text
        m = self.rng.choice(matches)
        dims = m.group(1).split("x")
        i = self.rng.randrange(len(dims))
        choice = self.rng.random()
        if choice < 0.3 and i < len(dims) - 1:
            dims[i] = "?"
        elif choice < 0.6 and i < len(dims) - 1:
            dims[i] = self.rng.choice(["0", "1", "2", "3", "17", "4096", "2147483648",
                                       "9223372036854775807"])
        elif choice < 0.8:
            dims.insert(i, self.rng.choice(["1", "2", "?"]))
        elif len(dims) > 1:
            del dims[i]
        return text[:m.start()] + "tensor<" + "x".join(dims) + ">" + text[m.end():]

    def word(self, text):
        return self.replace_token(text, r"(?<![%@\w.])[A-Za-z_][\w.]*",
                                  lambda _: self.rng.choice(self.words))

    def element_type(self, text):
        return self.replace_token(text, r"\b(?:f32|f16|bf16|f64)\b",
                                  lambda _: self.rng.choice(ELEMENT_TYPES))

    def ssa(self, text):
        names = re.findall(r"%[\w.#]+", text)
        if not names:
            return text
        return self.replace_token(text, r"%[\w.#]+", lambda _: self.rng.choice(names))

    def lines(self, text):
        lines = text.split("\n")
        i = self.rng.randrange(len(lines))
        choice = self.rng.random()
        if choice < 0.35:
            del lines[i]
        elif choice < 0.55:
            lines.insert(i, lines[self.rng.randrange(len(lines))])
        elif choice < 0.7:
            j = self.rng.randrange(len(lines))
            lines[i], lines[j] = lines[j], lines[i]
        else:
            donor = self.rng.choice(self.seeds).split("\n")
            lines.insert(i, self.rng.choice(donor))
        return "\n".join(lines)

    def splice(self, text):
        """The start of this spec and the end of another."""
        donor = self.rng.choice(self.seeds)
        return text[:self.rng.randrange(len(text) + 1)] + donor[self.rng.randrange(len(donor) + 1):]

    def attribute(self, text):
        """A unit or dictionary attribute where an op or argument may take one."""
        extra = self.rng.choice([" {attn.no_grad}", " {attn.weight}",
                                 " {attn.allow_approximation}", " causal", " transpose_rhs",
                                 " align_corners", " exclusive", " {attn.gradient_of = @f}"])
        spots = [m.end() for m in re.finditer(r"tensor<[^<>]*>|%\w+(?= )", text)]
        if not spots:
            return text
        i = self.rng.choice(spots)
        return text[:i] + extra + text[i:]

    def bytes(self, text):
        if not text:
            return text
        i = self.rng.randrange(len(text))
        choice = self.rng.random()
        if choice < 0.3:
            return text[:i]
        if choice < 0.6:
            return text[:i] + text[i + self.rng.randint(1, 8):]
        return text[:i] + self.rng.choice("{}()<>[],:=%@#?!x-+.\"0123456789 \n\\\x00\xff") + text[i:]

    MUTATIONS = [number, number, dim, dim, word, word, element_type, ssa, lines, lines,
                 splice, attribute, bytes]


def regression_text(run_line, spec, expect_ok=False):
    """A regression corpus entry: the command (`%s` for the file) and the
    input; `expect_ok` when the command must succeed."""
    header = f"// RUN: {run_line}\n" + ("// EXPECT: ok\n" if expect_ok else "")
    return header + spec


class SpecFuzzer(harness.Fuzzer):
    name = "specs"

    def __init__(self, *args):
        super().__init__(*args)
        seeds = load_seeds(self.root)
        seeds += [specgen.generate(self.rng, {}).text for _ in range(200)]
        self.seeds = seeds
        self.mutator = Mutator(self.rng, seeds)
        self.run_seconds = 0.0
        self.to_run = []

    def attn_opt(self, pipeline, extra=()):
        return [os.path.join(self.bin, "attn-opt")] + list(extra) + list(pipeline)

    def write(self, name, text):
        path = os.path.join(self.work, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def check_one(self, spec, args, expect_ok=False):
        """Runs one input alone; records it, minimized, if it is a finding."""
        outcome = self.run_one(spec, args, expect_ok)
        if outcome.finding:
            if outcome.kind != "hang":  # each try would wait for the timeout
                spec = self.minimize(spec, args, expect_ok, outcome.signature)
            run_line = shlex.join([os.path.basename(args[0])] + args[1:] + ["%s"])
            self.stats.record(outcome, "spec", regression_text(run_line, spec, expect_ok), "mlir")
        return outcome

    def run_one(self, spec, args, expect_ok):
        outcome, _ = harness.run(args + [self.write("one.mlir", spec)], ONE_TIMEOUT_S)
        self.stats.count(outcome)
        if expect_ok and outcome.kind == "rejected":
            outcome.kind = "roundtrip"
            outcome.signature = "roundtrip " + first_error(outcome.output)
        return outcome

    def minimize(self, spec, args, expect_ok, signature):
        """Drops lines while the same finding remains."""
        lines = spec.split("\n")
        i = 0
        while i < len(lines) and len(lines) > 1:
            candidate = lines[:i] + lines[i + 1:]
            if self.run_one("\n".join(candidate), args, expect_ok).signature == signature:
                lines = candidate
            else:
                i += 1
        return "\n".join(lines)

    def batch(self, specs, args, expect_ok=False):
        """Runs `specs` through one attn-opt; returns each one's printed IR
        ("" if rejected; "ok" if accepted when run alone)."""
        if len(specs) == 1:
            return ["ok" if self.check_one(specs[0], args, expect_ok).kind == "ok" else ""]
        path = self.write("batch.mlir", ("\n" + SPLIT + "\n").join(specs))
        outcome, stdout = harness.run(args + ["--split-input-file",
                                              "--output-split-marker=" + SPLIT, path],
                                       BATCH_TIMEOUT_S)
        self.stats.count(outcome)
        printed = stdout.split(SPLIT + "\n")
        if (not outcome.finding and len(printed) == len(specs)
                and not (expect_ok and outcome.kind == "rejected")):
            return printed
        # Find the culprits by halves.
        half = len(specs) // 2
        return self.batch(specs[:half], args, expect_ok) + self.batch(specs[half:], args,
                                                                      expect_ok)

    def step(self):
        specs = [self.mutator.mutate(self.rng.choice(self.seeds)) for _ in range(BATCH)]
        self.stats.inputs += len(specs)
        pipeline = self.rng.choice(PIPELINES)
        printed = self.batch(specs, self.attn_opt(pipeline))
        if pipeline:
            return
        accepted = [(s, p) for s, p in zip(specs, printed) if p.strip()]
        for spec, _ in accepted:
            if len(self.seeds) < MAX_SEEDS:
                self.seeds.append(spec)
            else:
                self.seeds[self.rng.randrange(len(self.seeds))] = spec
        self.to_run += [s for s, _ in accepted]
        # The printer writes what the parser reads (custom and generic form).
        generic = self.rng.random() < 0.5
        reprinted = [p for _, p in accepted if p.strip() and p != "ok"]
        if generic and accepted:
            reprinted = [p for p in self.batch([s for s, _ in accepted],
                                               self.attn_opt([], ["--mlir-print-op-generic"]))
                         if p.strip() and p != "ok"]
        if reprinted:
            self.batch(reprinted, self.attn_opt([]), expect_ok=True)

    def run_mutant(self):
        """Compiles and runs one verified mutant against the reference."""
        spec = self.to_run.pop(self.rng.randrange(len(self.to_run)))
        funcs = re.findall(r"func\.func\s+(?:private\s+)?@([\w$.]+)", spec)
        if not funcs:
            return
        path = self.write("run.mlir", spec)
        args = [os.path.join(self.bin, "attn-run"), path, "--func", self.rng.choice(funcs),
                "--random", str(self.rng.randrange(1000)), "--dynamic-size",
                str(self.rng.choice([1, 3, 16])), "--check", "--quiet", "--max-memory", "1G"]
        if self.rng.random() < 0.3:
            args.append("--grad")
        self.stats.inputs += 1
        outcome, _ = harness.run(args, RUN_TIMEOUT_S)
        self.stats.count(outcome)
        if outcome.kind == "mismatch":
            # A mutant may compute an ill-conditioned function: worth a look,
            # not a finding.
            self.stats.note("a verified mutant's kernel differs from the reference",
                            f"$ {shlex.join(args)}\n{spec}{outcome.output[-600:]}")
        if outcome.kind in harness.CRASH_KINDS:
            run_line = shlex.join(["attn-run", "%s"] + args[2:])
            self.stats.record(outcome, "run", regression_text(run_line, spec), "mlir")

    def fuzz(self):
        while self.stats.time_left() > 0:
            if self.to_run and self.run_seconds < RUN_SHARE * self.stats.elapsed():
                start = time.time()
                self.run_mutant()
                self.run_seconds += time.time() - start
            else:
                self.step()


def first_error(output):
    m = re.search(r"error: (.*)", output)
    return re.sub(r"\d+", "N", m.group(1))[:120] if m else ""
