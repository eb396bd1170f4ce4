"""What the fuzzers share: running a tool under a timeout, telling a finding
from a proper rejection, and keeping the findings.

The rule being fuzzed: bad input never crashes or hangs a tool. A tool that
exits 0, or 1 with an `error:` diagnostic, behaved; anything else is a
finding: a signal or another exit code, a timeout, an LLVM fatal error or
assertion, an uncaught exception, a Halide internal error, or exit 1 with no
diagnostic.
"""

import hashlib
import os
import re
import resource
import subprocess
import time

# Printed by a tool that failed in a way a user must never see. Anchored
# where the tool prints them, so that a spec echoed in a diagnostic (the
# corpus has comments that name them) does not match.
CRASH_MARKERS = re.compile(
    r"^(PLEASE submit a bug report|Stack dump:|LLVM ERROR:|terminate called"
    r"|Segmentation fault)|Assertion `.*' failed|UNREACHABLE executed at"
    r"|Internal Error at |AddressSanitizer", re.M)
DIAGNOSTIC = re.compile(r"(^|\s)error:", re.M)
# `attn-run --check` / `--check-grad` beyond the tolerance.
MISMATCH = re.compile(r"^(check(?:-grad)?: @\S+ (?:\S+ )?FAILED: .*)$", re.M)
# The findings of any input, bad or not (a mismatch or a rejection counts
# only for inputs that are valid).
CRASH_KINDS = ("crash", "hang", "no-diagnostic")
# Address space of a tool run: a spec that makes a tool allocate without
# bound fails here (a finding) instead of taking the shared machine down.
MEMORY_LIMIT = 8 << 30


# The regression corpus: one folder per fuzzer, and XFAIL.
REGRESSIONS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "regressions")


def expected_failures():
    """regressions/XFAIL: `<fuzzer>/<file>: why` per entry still failing."""
    path = os.path.join(REGRESSIONS, "XFAIL")
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return dict(line.split(":", 1) for line in f
                    if line.strip() and not line.startswith("#"))


class Outcome:
    """How one tool run ended: `kind` is "ok", "rejected" (exit 1 with a
    diagnostic) or a finding ("crash", "hang", "no-diagnostic",
    "mismatch"); `signature` names a finding for deduplication."""

    def __init__(self, kind, args, output="", signature=""):
        self.kind = kind
        self.args = args
        self.output = output
        self.signature = signature

    @property
    def finding(self):
        return self.kind not in ("ok", "rejected")


# A sanitizer build (scripts/test.sh --sanitize sets ASAN_OPTIONS) maps
# terabytes of shadow memory at start-up, which no address-space limit
# allows: its tools get ASan's own limit on one allocation instead (over it
# an allocation fails as under the address-space limit).
SANITIZED = "ASAN_OPTIONS" in os.environ
TOOL_ENV = dict(os.environ)
if SANITIZED:
    TOOL_ENV["ASAN_OPTIONS"] = (os.environ["ASAN_OPTIONS"] +
                                f":max_allocation_size_mb={MEMORY_LIMIT >> 20}")


def limit_memory():
    if not SANITIZED:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    # A crashing tool writes no core file into the working directory.
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


FRAME = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ (?!\(/)(.+)$", re.M)


def crash_line(output):
    """What went wrong, for a finding's signature: the fatal message, or
    the function of the innermost stack frame outside the signal handler."""
    for line in output.splitlines():
        if CRASH_MARKERS.search(line) and not line.startswith(("PLEASE", "Stack dump")):
            return re.sub(r"0x[0-9a-f]+|\d+", "N", line.strip())[:160]
    for frame in FRAME.findall(output):
        if "llvm::sys::" not in frame:
            return "in " + frame.replace("(anonymous namespace)::", "").split("(")[0][:120]
    return ""


def run(args, timeout, stdin=None):
    """Runs a tool; returns its Outcome and stdout."""
    try:
        proc = subprocess.run(args, input=stdin, capture_output=True, timeout=timeout,
                              preexec_fn=limit_memory, env=TOOL_ENV)
    except subprocess.TimeoutExpired:
        return Outcome("hang", args, signature=f"hang {os.path.basename(args[0])}"), ""
    stdout = proc.stdout.decode(errors="replace")
    output = stdout + proc.stderr.decode(errors="replace")
    tool = os.path.basename(args[0])
    line = crash_line(output)
    if proc.returncode < 0 or proc.returncode not in (0, 1) or line:
        what = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit {proc.returncode}"
        return Outcome("crash", args, output, f"crash {tool} {what} {line}"), stdout
    if proc.returncode == 1 and MISMATCH.search(output):
        return Outcome("mismatch", args, output, f"mismatch {tool}"), stdout
    if proc.returncode == 1 and not DIAGNOSTIC.search(output):
        return Outcome("no-diagnostic", args, output, f"no-diagnostic {tool}"), stdout
    return Outcome("ok" if proc.returncode == 0 else "rejected", args, output), stdout


class Fuzzer:
    """What every fuzzer holds: the folder of the tools, the repository's
    root, its seeded random source, its Stats and a scratch folder. A
    fuzzer's `fuzz()` runs until its Stats' deadline."""

    name = ""

    def __init__(self, bin_dir, root, rng, stats, work_dir):
        self.bin = bin_dir
        self.root = root
        self.rng = rng
        self.stats = stats
        self.work = work_dir


class Stats:
    """Executions and findings of one fuzzer; keeps one reproducer per
    distinct finding (its signature) in `findings_dir`."""

    def __init__(self, name, findings_dir, seconds):
        self.name = name
        self.findings_dir = findings_dir
        self.start = time.time()
        self.deadline = self.start + seconds
        self.inputs = 0
        self.runs = 0
        self.kinds = {}
        self.findings = []  # (signature, path)
        self.signatures = set()
        # Findings already in the corpus as expected failures (XFAIL).
        self.known = set()
        self.known_hits = 0
        self.notes = {}

    def time_left(self):
        return self.deadline - time.time()

    def elapsed(self):
        return time.time() - self.start

    def count(self, outcome):
        self.runs += 1
        self.kinds[outcome.kind] = self.kinds.get(outcome.kind, 0) + 1

    def note(self, text, detail=""):
        """A non-finding worth a look (e.g. a valid spec the tools reject);
        the first of each kind is printed with its `detail`."""
        if text not in self.notes and detail:
            print(f"fuzz {self.name}: note: {text}\n{detail}", flush=True)
        self.notes[text] = self.notes.get(text, 0) + 1

    def record(self, outcome, name, data, ext):
        """Keeps a reproducer of a new finding; returns its path or None."""
        if outcome.signature in self.known:
            self.known_hits += 1
            return None
        if outcome.signature in self.signatures:
            return None
        self.signatures.add(outcome.signature)
        os.makedirs(self.findings_dir, exist_ok=True)
        digest = hashlib.sha1(data if isinstance(data, bytes) else data.encode()).hexdigest()
        path = os.path.join(self.findings_dir, f"{name}-{digest[:10]}.{ext}")
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        self.findings.append((outcome.signature, path))
        print(f"fuzz {self.name}: FINDING {outcome.signature}\n  reproducer: {path}\n"
              f"  $ {' '.join(outcome.args)}", flush=True)
        print(excerpt(outcome.output), flush=True)
        return path

    def summary(self):
        kinds = ", ".join(f"{k} {v}" for k, v in sorted(self.kinds.items()))
        return (f"fuzz {self.name}: {self.inputs} inputs, {self.runs} tool runs "
                f"({kinds}) in {time.time() - self.start:.0f} s, "
                f"{len(self.findings)} findings"
                + (f" ({self.known_hits} known, in XFAIL)" if self.known_hits else ""))


def excerpt(output, lines=8):
    """The lines of a tool's output that say what happened (its diagnostics
    or fatal message, not the stack frames), indented."""
    text = [l for l in output.strip().splitlines() if not re.match(r"\s*#\d+ 0x", l)]
    return "\n".join("    " + l[:300] for l in text[:lines])
