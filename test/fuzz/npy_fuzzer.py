"""Mutated .npy files through attn-run's loader.

Seeds are valid files (versions 1.0, 2.0 and 3.0; float16, float32 and
float64) of the argument shapes of test/fuzz/Inputs/npy-target.mlir.
A mutant has its header rewritten (shapes with negative, zero, huge or
malformed dims; other dtypes and byte orders; Fortran order; missing,
repeated and unknown keys), its header length, version or magic corrupted,
its data cut short, extended or made NaN and Inf, or bytes flipped. Each
mutant is an input (`--input`) or a gradient's cotangent (`--cotangent`) of
one function of the target, evaluated by the reference runtime and, now and
then, by a JIT kernel.
"""

import os
import re
import struct

import harness

RUN_TIMEOUT_S = 60
JIT_SHARE = 0.05
TARGET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs", "npy-target.mlir")
# The functions of TARGET: (name, argument shape with None for `?`, dtype).
FUNCTIONS = [
    ("static", (3, 4), "<f4"),
    ("dynamic", (None, None), "<f4"),
    ("vector", (5,), "<f8"),
    ("half", (2, 3), "<f2"),
    ("brain", (1, 2, None, 3), "<f4"),
]
SHAPES = ["()", "(0,)", "(0, 4)", "(3, 0)", "(-1, 4)", "(3, -4)", "(2147483648, 4)",
          "(4294967296, 4294967296)", "(9223372036854775807,)", "(99999999999999999999, 1)",
          "(3, 4, 1)", "(1, 3, 4)", "(12,)", "(3.0, 4)", "('3', 4)", "(3, 4", "3, 4)",
          "(3 4)", "(,)", "(True, 4)", "[3, 4]", "(3, (4,))", "(0x3, 4)", "(1, 2, 0, 3)",
          "(1, 2, 100000000, 3)", "(65536, 65536)", "(3, 4,,)", "(+3, 4)", "(3_0, 4)"]
DESCRS = ["<f4", "<f8", "<f2", ">f4", ">f8", "|f4", "=f4", "f4", "<i4", "<u1", "|b1",
          "<c8", "<f16", "O", "<U3", "V4", "<M8[s]", "float32", "<f4 ", "", "<f", "<f0",
          "<f99999999999999999999"]
FORTRAN = ["False", "True", "0", "1", "None", "'False'", "Fals"]


def npy(shape, descr, version=(1, 0), data=None, header=None):
    """A .npy image; `header` replaces the dict text if given."""
    if header is None:
        header = (f"{{'descr': '{descr}', 'fortran_order': False, "
                  f"'shape': {shape_text(shape)}, }}")
    width = 2 if version[0] == 1 else 4
    raw = header.encode("utf-8" if version[0] >= 3 else "latin-1", "replace")
    pad = -(10 + width - 2 + len(raw) + 1) % 64
    raw += b" " * pad + b"\n"
    length = struct.pack("<H" if width == 2 else "<I", len(raw))
    if data is None:
        count = 1
        for d in shape:
            count *= d
        size = {"<f2": 2, "<f4": 4, "<f8": 8}[descr]
        code = {"<f2": "e", "<f4": "f", "<f8": "d"}[descr]
        data = struct.pack(f"<{count}{code}", *[(i % 7) / 7.0 for i in range(count)])
        assert len(data) == count * size
    return b"\x93NUMPY" + bytes(version) + length + raw + data


def shape_text(shape):
    return "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")" if len(shape) != 1 \
        else f"({shape[0]},)"


class Mutator:
    def __init__(self, rng):
        self.rng = rng

    def header_parts(self, image):
        """(prefix through the length field, header text, data)."""
        width = 2 if image[6:7] == b"\x01" else 4
        start = 8 + width
        (length,) = struct.unpack("<H" if width == 2 else "<I", image[8:start])
        return image[:start], image[start:start + length].decode("latin-1"), image[start + length:]

    def header(self, image):
        """Rewrites one field of the header dict (lengths kept consistent)."""
        rng = self.rng
        prefix, header, data = self.header_parts(image)
        choice = rng.random()
        if choice < 0.3:
            header = re.sub(r"'shape': \([^)]*\)", "'shape': " + rng.choice(SHAPES), header)
        elif choice < 0.5:
            header = re.sub(r"'descr': '[^']*'", f"'descr': '{rng.choice(DESCRS)}'", header)
        elif choice < 0.6:
            header = header.replace("False", rng.choice(FORTRAN), 1)
        elif choice < 0.7:
            key = rng.choice(["'descr': '<f4', ", "'shape': (3, 4), ", "'fortran_order': False, ",
                              "'extra': 1, ", "'shape': (), "])
            header = header.replace("{", "{" + key, 1)
        elif choice < 0.8:
            header = re.sub(rng.choice([r"'descr': '[^']*', ", r"'fortran_order': \w+, ",
                                        r"'shape': \([^)]*\), "]), "", header)
        else:
            i = rng.randrange(len(header) + 1)
            header = header[:i] + rng.choice(["{", "}", "'", ":", ",", "(", ")", "\x00",
                                              "\xff", " " * 70000]) + header[i:]
        version = (image[6], image[7])
        if version[0] not in (1, 2, 3):
            version = (1, 0)
        return npy(None, None, version, data, header.strip())

    def structure(self, image):
        """Corrupts the magic, the version or the header length."""
        rng = self.rng
        image = bytearray(image)
        choice = rng.random()
        if choice < 0.3:
            image[rng.randrange(6)] = rng.randrange(256)
        elif choice < 0.6:
            image[6:8] = bytes(rng.choice([(0, 0), (2, 0), (3, 0), (4, 0), (1, 1), (255, 255)]))
        else:
            width = 2 if image[6] == 1 else 4
            value = rng.choice([0, 1, 9, len(image), len(image) - 9, 65535, 1 << 31,
                                (1 << 32) - 1])
            image[8:8 + width] = value.to_bytes(8, "little")[:width]
        return bytes(image)

    def data(self, image):
        """Cuts the data, extends it, or writes NaN and infinities into it."""
        rng = self.rng
        prefix, header, data = self.header_parts(image)
        choice = rng.random()
        if choice < 0.4:
            data = data[:rng.randrange(len(data) + 1)]
        elif choice < 0.6:
            data += bytes(rng.randrange(256) for _ in range(rng.choice([1, 3, 4, 8, 100])))
        else:
            data = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                if len(data) >= 4:
                    i = rng.randrange(len(data) - 3)
                    data[i:i + 4] = rng.choice([b"\x00\x00\xc0\x7f", b"\x00\x00\x80\x7f",
                                                b"\x00\x00\x80\xff", b"\xff\xff\xff\xff"])
            data = bytes(data)
        return prefix + header.encode("latin-1") + data

    def bytes(self, image):
        rng = self.rng
        image = bytearray(image)
        for _ in range(rng.randint(1, 8)):
            if not image:
                break
            i = rng.randrange(len(image))
            choice = rng.random()
            if choice < 0.5:
                image[i] ^= 1 << rng.randrange(8)
            elif choice < 0.75:
                del image[i]
            else:
                image.insert(i, rng.randrange(256))
        return bytes(image)

    def mutate(self, image):
        for _ in range(self.rng.choice([1, 1, 1, 2, 3])):
            try:
                image = self.rng.choice([self.header, self.header, self.structure, self.data,
                                         self.bytes])(image)
            except (struct.error, UnicodeError, IndexError, ValueError):
                image = self.bytes(image)
        return image


def seeds():
    """A valid file for each function's argument, in every version."""
    images = []
    for _, shape, descr in FUNCTIONS:
        concrete = tuple(2 if d is None else d for d in shape)
        for version in ((1, 0), (2, 0), (3, 0)):
            images.append((npy(concrete, descr, version), shape))
    return images


def commands(bin_dir, path, function, rng):
    """attn-run taking `path` as the input or the cotangent of `function`;
    with `rng` None, every such command (the replay)."""
    run = [os.path.join(bin_dir, "attn-run"), TARGET, "--func", function, "--quiet"]
    as_input = run + ["--input", f"x={path}", "--reference"]
    as_cotangent = run + ["--random", "1", "--dynamic-size", "2", "--grad", "--reference",
                          "--cotangent", path]
    jit = run + ["--input", f"x={path}", "--check"]
    if rng is None:
        return [as_input, as_cotangent, jit]
    if rng.random() < JIT_SHARE:
        return [jit]
    return [rng.choice([as_input, as_input, as_cotangent])]


class NpyFuzzer(harness.Fuzzer):
    name = "npy"

    def __init__(self, *args):
        super().__init__(*args)
        self.seeds = seeds()
        self.mutator = Mutator(self.rng)

    def fuzz(self):
        path = os.path.join(self.work, "input.npy")
        while self.stats.time_left() > 0:
            image, _ = self.rng.choice(self.seeds)
            image = self.mutator.mutate(image)
            with open(path, "wb") as f:
                f.write(image)
            function = self.rng.choice(FUNCTIONS)[0]
            self.stats.inputs += 1
            for args in commands(self.bin, path, function, self.rng):
                outcome, _ = harness.run(args, RUN_TIMEOUT_S)
                self.stats.count(outcome)
                if outcome.kind == "mismatch":
                    # NaN and infinite inputs: the kernel and the reference
                    # share no rule for them yet (docs/reliability.md).
                    self.stats.note("a kernel differs from the reference on a mutated file")
                if outcome.kind in harness.CRASH_KINDS:
                    self.stats.record(outcome, "npy", image, "npy")


def replay(bin_dir, path):
    """Outcomes of every command the fuzzer may run on one .npy file."""
    return [harness.run(args, RUN_TIMEOUT_S)[0]
            for function, _, _ in FUNCTIONS
            for args in commands(bin_dir, path, function, None)]

