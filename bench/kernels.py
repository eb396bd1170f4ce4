"""The benchmark kernels: shapes, spec files, FLOP and compulsory-byte counts.

This is the one place that says what each benchmark computes and how much
work it is. bench/peers.py and bench/report.py both import it; it needs
nothing outside the Python standard library, so either venv can load it.

Counting rules (docs/performance.md repeats them):

- FLOPs are those of the matrix products of the cheapest exact way to
  compute the kernel, 2 per multiply-add. Exponentials, maxima, divisions
  and feature maps are not counted: they are O(1) per score or per element,
  and the roofline's compute ceiling is an FMA peak.
- Compulsory bytes are every input read once plus the output written once,
  4 bytes per f32 element. Intermediates (scores, contexts) are not counted:
  a kernel that spills them pays for it in time, not in the bound.
- The roofline time of a kernel is max(FLOPs / FMA peak, bytes / stream
  bandwidth), both measured by bench/roofline in the same run.
"""

from dataclasses import dataclass, field
from pathlib import Path

F32_BYTES = 4
BENCH_DIR = Path(__file__).resolve().parent
SPEC_DIR = BENCH_DIR / "specs"


@dataclass(frozen=True)
class Kernel:
    name: str          # row name in the report and base name of the spec
    family: str        # softmax | efficient | linear | external | deformable
    func: str          # the func.func in the spec
    shapes: dict       # argument name -> shape, in argument order
    output: tuple      # output shape
    flops: int
    compulsory_bytes: int
    params: dict = field(default_factory=dict)

    @property
    def spec(self) -> Path:
        return SPEC_DIR / f"{self.name}.mlir"

    @property
    def intensity(self) -> float:
        """FLOPs per compulsory byte."""
        return self.flops / self.compulsory_bytes


def _elements(*shapes):
    total = 0
    for shape in shapes:
        count = 1
        for dim in shape:
            count *= dim
        total += count
    return total


def softmax_attention(heads, n, m, dk, dv, scale):
    """O = softmax_keys(scale * Q K^T) V per head.

    FLOPs: Q K^T is n*m*dk MACs, P V is n*m*dv MACs, per head.
    """
    q, k, v, o = (heads, n, dk), (heads, m, dk), (heads, m, dv), (heads, n, dv)
    return Kernel(
        name=f"softmax_h{heads}_n{n}",
        family="softmax",
        func=f"softmax_h{heads}_n{n}",
        shapes={"q": q, "k": k, "v": v},
        output=o,
        flops=2 * heads * n * m * (dk + dv),
        compulsory_bytes=F32_BYTES * _elements(q, k, v, o),
        params=dict(heads=heads, n=n, m=m, dk=dk, dv=dv, scale=scale),
    )


def efficient_attention(n, dk, dv):
    """E = softmax_features(Q) (softmax_positions(K)^T V) (Shen et al.).

    FLOPs: the dk x dv context K^T V is m*dk*dv MACs, Q times it n*dk*dv.
    """
    q, k, v, o = (n, dk), (n, dk), (n, dv), (n, dv)
    return Kernel(
        name=f"efficient_n{n}",
        family="efficient",
        func=f"efficient_n{n}",
        shapes={"q": q, "k": k, "v": v},
        output=o,
        flops=2 * (n + n) * dk * dv,
        compulsory_bytes=F32_BYTES * _elements(q, k, v, o),
        params=dict(n=n, m=n, dk=dk, dv=dv),
    )


def linear_attention(n, dk, dv):
    """O = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1), phi = elu + 1.

    The spec says it as attn.dot_product norm [sum over keys] feature_map
    elu_plus_one; the cheapest exact form is the reassociated one above,
    whose products are phi(K)^T [V 1] (m*dk*(dv+1) MACs) and phi(Q) times
    that (n*dk*(dv+1) MACs). A kernel that keeps the quadratic form does
    n*m*(dk+dv) MACs and is measured against this smaller count.
    """
    q, k, v, o = (n, dk), (n, dk), (n, dv), (n, dv)
    return Kernel(
        name=f"linear_n{n}",
        family="linear",
        func=f"linear_n{n}",
        shapes={"q": q, "k": k, "v": v},
        output=o,
        flops=2 * (n + n) * dk * (dv + 1),
        compulsory_bytes=F32_BYTES * _elements(q, k, v, o),
        params=dict(n=n, m=n, dk=dk, dv=dv),
    )


def external_attention(n, d, slots, eps=1e-9):
    """EANet: A = X Mk^T; softmax over positions; A / (eps + sum over slots);
    O = A Mv.

    FLOPs: X Mk^T is n*S*d MACs, A Mv is n*S*d MACs (dv = d).
    """
    x, mk, mv, o = (n, d), (slots, d), (slots, d), (n, d)
    return Kernel(
        name=f"external_n{n}",
        family="external",
        func=f"external_n{n}",
        shapes={"x": x, "mk": mk, "mv": mv},
        output=o,
        flops=2 * n * slots * (d + d),
        compulsory_bytes=F32_BYTES * _elements(x, mk, mv, o),
        params=dict(n=n, d=d, slots=slots, eps=eps),
    )


def deformable_attention(name, levels, queries, heads=8, points=4, depth=32,
                         batch=1):
    """Multi-scale deformable attention (Deformable DETR, MSDeformAttn core):
    out[n, q, h*D + d] = sum over levels l, points p of
    w[n, q, h, l, p] * bilinear(value level l, head h, loc[n, q, h, l, p])[d].

    FLOPs: per (query, head, level, point, channel) the bilinear sample is 4
    corner MACs and the weighted sum 1 MAC: 10 FLOPs (the per-sample
    coordinate and corner-weight arithmetic is not counted, like the
    exponentials elsewhere). Compulsory bytes: value, sampling locations,
    attention weights read once, the output written once.
    """
    rows = sum(h * w for h, w in levels)
    nl = len(levels)
    value = (batch, rows, heads, depth)
    loc = (batch, queries, heads, nl, points, 2)
    weights = (batch, queries, heads, nl, points)
    out = (batch, queries, heads * depth)
    return Kernel(
        name=name,
        family="deformable",
        func=name,
        shapes={"value": value, "sampling_locations": loc,
                "attention_weights": weights},
        output=out,
        flops=10 * batch * queries * heads * nl * points * depth,
        compulsory_bytes=F32_BYTES * _elements(value, loc, weights, out),
        params=dict(levels=list(levels), queries=queries, heads=heads,
                    points=points, depth=depth, batch=batch),
    )


# Deformable DETR's 4 feature levels for an 800 x 1200 input (strides 8-64).
DETR_LEVELS = [(100, 150), (50, 75), (25, 38), (13, 19)]

# The shapes of issue 4, item 6, and of issue 5, item 5.
KERNELS = [
    softmax_attention(heads=8, n=1024, m=1024, dk=64, dv=64, scale=0.125),
    softmax_attention(heads=8, n=4096, m=4096, dk=64, dv=64, scale=0.125),
    *[efficient_attention(n, dk=32, dv=64) for n in (4096, 16384, 65536)],
    *[linear_attention(n, dk=32, dv=64) for n in (4096, 16384, 65536)],
    external_attention(n=4096, d=512, slots=64),
    # Encoder: every pixel of every level is a query; decoder: 300 queries.
    deformable_attention("deformable_encoder", DETR_LEVELS,
                         queries=sum(h * w for h, w in DETR_LEVELS)),
    deformable_attention("deformable_decoder", DETR_LEVELS, queries=300),
]

KERNELS_BY_NAME = {kernel.name: kernel for kernel in KERNELS}


def roofline_seconds(kernel, fma_peak_gflops, stream_gbs):
    """max(FLOPs / FMA peak, compulsory bytes / stream bandwidth)."""
    return max(kernel.flops / (fma_peak_gflops * 1e9),
               kernel.compulsory_bytes / (stream_gbs * 1e9))


def bound(kernel, fma_peak_gflops, stream_gbs):
    """'compute' or 'memory': which ceiling sets the roofline time."""
    compute = kernel.flops / (fma_peak_gflops * 1e9)
    memory = kernel.compulsory_bytes / (stream_gbs * 1e9)
    return "compute" if compute >= memory else "memory"


def _tensor(shape):
    return "tensor<" + "x".join(str(dim) for dim in shape) + "xf32>"


def render_spec(kernel):
    """The attn spec of a kernel: bench/specs/<name>.mlir holds exactly this
    text (`python3 bench/kernels.py --write-specs` rewrites the files,
    `--check-specs` fails if they differ), so shapes live only here."""
    p = kernel.params
    args = ", ".join(f"%{name}: {_tensor(shape)}"
                     for name, shape in kernel.shapes.items())
    arg_types = ", ".join(_tensor(shape) for shape in kernel.shapes.values())
    result = _tensor(kernel.output)
    operands = ", ".join(f"%{name}" for name in kernel.shapes)
    if kernel.family == "softmax":
        header = (f"Softmax attention, {p['heads']} heads, n = m = {p['n']}, "
                  f"dk = dv = {p['dk']}:\n"
                  f"//   O = softmax_keys({p['scale']} * Q K^T) V")
        op = (f"attn.dot_product {operands} norm [softmax over keys] "
              f"scale {p['scale']}")
    elif kernel.family == "efficient":
        header = (f"Efficient attention, softmax variant (Shen et al.), "
                  f"n = {p['n']}, dk = {p['dk']}, dv = {p['dv']}:\n"
                  "//   E = softmax_features(Q) (softmax_positions(K)^T V)")
        op = f"attn.efficient {operands} variant softmax"
    elif kernel.family == "linear":
        header = (f"Linear attention (Katharopoulos et al.), n = m = {p['n']}, "
                  f"dk = {p['dk']}, dv = {p['dv']}, phi = elu + 1:\n"
                  "//   O = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1)")
        op = (f"attn.dot_product {operands} norm [sum over keys] "
              "feature_map elu_plus_one")
    elif kernel.family == "external":
        header = (f"External attention (EANet), n = {p['n']}, d = {p['d']}, "
                  f"S = {p['slots']} slots:\n"
                  "//   A = X Mk^T; softmax over positions; "
                  "A / (1e-9 + sum over slots); O = A Mv")
        op = f"attn.external {operands}"
    elif kernel.family == "deformable":
        levels = ", ".join(f"{h}x{w}" for h, w in p["levels"])
        header = (f"Multi-scale deformable attention (Deformable DETR), "
                  f"Lq = {p['queries']}, M = {p['heads']}, "
                  f"L = {len(p['levels'])}, P = {p['points']}, "
                  f"D = {p['depth']}:\n"
                  "//   out[q, h] = sum_l sum_p w[q, h, l, p] * "
                  "bilinear(V_l[h], loc[q, h, l, p])")
        op = f"attn.deformable {operands} levels [{levels}]"
    else:
        raise ValueError(f"unknown kernel family {kernel.family}")
    return (f"// Benchmark kernel {kernel.name} (bench/kernels.py renders this "
            f"file).\n// {header}\n"
            f"func.func @{kernel.func}({args}) -> {result} {{\n"
            f"  %o = {op}\n"
            f"      : {arg_types} -> {result}\n"
            f"  return %o : {result}\n}}\n")


def check_specs(write):
    """Compares (or with write=True, rewrites) bench/specs/*.mlir."""
    stale = []
    for kernel in KERNELS:
        text = render_spec(kernel)
        if write:
            SPEC_DIR.mkdir(exist_ok=True)
            kernel.spec.write_text(text)
        elif not kernel.spec.exists() or kernel.spec.read_text() != text:
            stale.append(kernel.spec.name)
    return stale


if __name__ == "__main__":
    import sys
    if sys.argv[1:] in (["--write-specs"], ["--check-specs"]):
        stale = check_specs(write=sys.argv[1] == "--write-specs")
        if stale:
            sys.exit("bench/specs out of date with bench/kernels.py: "
                     + ", ".join(stale)
                     + " (run python3 bench/kernels.py --write-specs)")
        sys.exit(0)
    if sys.argv[1:]:
        sys.exit("usage: kernels.py [--write-specs | --check-specs]")
    # A quick look at the table of work: python3 bench/kernels.py
    print(f"{'kernel':<20} {'GFLOP':>9} {'MB':>9} {'FLOP/B':>7}  spec")
    for kernel in KERNELS:
        print(f"{kernel.name:<20} {kernel.flops / 1e9:9.3f} "
              f"{kernel.compulsory_bytes / 1e6:9.2f} {kernel.intensity:7.1f}  "
              f"{kernel.spec.relative_to(BENCH_DIR.parent)}")
