"""The benchmark kernels: shapes, spec files, FLOP and compulsory-byte counts.

This is the one place that says what each benchmark computes and how much
work it is. bench/peers.py and bench/report.py both import it; it needs
nothing outside the Python standard library, so either venv can load it.

Counting rules (docs/performance.md repeats them):

- FLOPs are those of the matrix products of the cheapest exact way to
  compute the kernel, 2 per multiply-add. Exponentials, maxima, divisions,
  feature maps and an additive bias are not counted: they are O(1) per
  score or per element, and the roofline's compute ceiling is an FMA peak.
- Softmax attention: 2 * problems * scores * (dk + dv), where problems is
  the number of (batch, query head) pairs of the output (its leading dims
  after numpy broadcasting) and scores = n * m per problem. With `causal`
  only the visible scores count (key j is visible to query i iff j <= i):
  n * (n + 1) / 2 per problem when n = m, not n * m. Grouped-query
  attention (K and V broadcast over the query heads of a group) counts per
  query head: every query head does its own n * m * (dk + dv) MACs.
- Compulsory bytes are every input read once plus the output written once,
  4 bytes per f32 element (2 per bf16 element, the bf16 rows below), each
  at its stored shape: a K, V or bias that
  broadcasts over leading dims is read once, not once per use.
  Intermediates (scores, contexts) are not counted: a kernel that spills
  them pays for it in time, not in the bound.
- The roofline time of a kernel is max(FLOPs / FMA peak, bytes / bandwidth),
  both measured by bench/roofline in the same run (the bf16 softmax rows
  put the bf16 dot-product peak in place of the FMA peak, below). The
  bandwidth is the
  stream bandwidth (the larger of STREAM copy and triad), except for the
  rows of issue 27 (the "shapes" group) that are read-dominated, whose
  compulsory bytes are at least READ_DOMINATED times their output's (LLM
  decode: K and V are read, one row per head is written): those are held
  to the probe's read-only bandwidth (`read_bandwidth_gbs`), the ceiling of
  a kernel that only reads. The rows of issues 4 and 5 keep the stream
  rule, read-dominated or not (deformable_decoder is), so their numbers
  stay comparable with docs/performance.md.

Backward rows (group "backward", issue 21, item 8): a row with grad=True
times the gradient @<func>_grad that attn's --attn-grad derives from the
spec of its forward row (`forward`; attn-run --grad), whose arguments are
f's arguments and one cotangent dO per result and whose results are the
gradients of f's arguments, against torch.autograd (bench/peers.py). Its
counts follow the same rules, applied to that function:

- FLOPs are the products of the cheapest exact way to compute the
  gradients from the gradient's own inputs (f's arguments and dO; nothing
  saved by a forward), 2 per multiply-add: every forward product X = A B
  has two backward products, dA = dX B^T and dB = A^T dX, with its MAC
  count each (2x the forward's products), and every forward product whose
  value the backward needs is recomputed once (the intermediates; not the
  last product, whose output the backward never needs). For the kernels
  here that gives (gradient() has the derivation per family):
    softmax     Q K^T recomputed, plus dV = P^T dO, dP = dO V^T,
                dQ = dS K, dK = dS^T Q: problems * scores * (3 dk + 2 dv)
                MACs, 2.5x the forward's at dk = dv (FlashAttention-2's
                count: 5 products against the forward's 2; its
                D = rowsum(dO * O) is rowsum(P * dP), elementwise);
    efficient   2 (n + m) dk dv: 2x the forward's, the context being
                saved by the forward (--grad-save-statistics);
    linear      as efficient with dv + 1 columns ([V 1]): 2x, the context
                and key sums being saved by the forward;
    external    2 products per forward product: 4 n S d MACs, 2x, the
                weights P = softmax over positions of X Mk^T being saved
                by the forward (--grad-save-statistics);
    deformable  per (query, head, level, point, channel) the bilinear
                sample recomputed (4 MACs), 2 x (4 + 1) backward MACs
                (value and corner-weight gradients of the sample, weight
                and sample gradients of the weighted sum): 28 FLOPs, 2.8x
                the forward's 10.
- Compulsory bytes: f's arguments and the cotangents read once, the
  gradients (one per argument, its shape) written once.
- attn's gradient recomputes what it needs of the forward; a primitive
  form (masked softmax) can materialize n x m score matrices (the fused
  softmax backward, attn.attention_grad, stores none), so
  bench/attn_bench.py skips a gradient row
  whose largest tensor exceeds BENCH_MAX_SCORE_BYTES (default 2e9), with
  the reason printed. It reads the largest tensor from the gradient attn
  compiles (attn-opt); Kernel.score_bytes is the estimate it falls back
  on (the spec's score matrices, over all problems).

bf16 rows (group "bf16", issue 22, item 5): a row made by bf16_row() is a
core row, its `f32_twin`, with every tensor bf16 (name <twin>_bf16; the
spec is the twin's with xf32> -> xbf16>). bf16 is a storage type in attn,
the arithmetic is f32 (docs/precision.md), so the counts follow the rules
above with:

- FLOPs: the twin's (the same products).
- Compulsory bytes: the twin's elements, 2 bytes each (element_bytes).
- Compute ceiling (compute_ceiling): for the softmax rows, the probe's bf16
  dot-product peak (`bf16_dot_peak_gflops`: vdpbf16ps, 32 multiply-adds per
  instruction; about twice the FMA peak on Zen 4), the ceiling issue 22
  holds softmax attention to. By default attn runs only the scores Q K^T
  on vdpbf16ps (bf16 Q and K); P V runs on f32 FMAs, so the FMA peak bounds
  that half: at dk = dv attn can reach at most 2 / (1 + r) of the bf16 dot
  peak, r = bf16 dot peak / FMA peak (2/3 at r = 2). The rows made by
  bf16_weights_row() opt into bf16 weights, and P V runs on vdpbf16ps
  too (efficient attention's: both softmaxes' weights and the context, and
  both products run on vdpbf16ps). The table shows the fraction of the
  bf16 dot peak for them all. The other bf16 rows keep the FMA peak: attn
  runs efficient and linear attention's products on FMAs by default, and
  deformable attention's bilinear samples are no dot products. Where the
  probe measured no bf16 dot peak (no AVX512-BF16; attn has no vdpbf16ps
  there either), or one below the FMA peak (Sapphire Rapids class Intel
  cores, where attn does not pair either: compute_peak), every row uses
  the FMA peak.
- The bandwidth: the stream bandwidth, as for the twin.

A bf16 row's speed-up over attn's own f32 kernel needs the twin timed in
the same run, so selecting a bf16 row selects its twin too.

Selecting rows: `select("a,b")` takes kernel names and group names
(GROUPS: "core" is the rows of issues 4 and 5, "shapes" those of issue 27,
"backward" the gradient rows of issue 21, "bf16" the bf16 rows of issue
22); bench/run.sh passes BENCH_KERNELS to it through attn_bench.py and
peers.py.
"""

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

F32_BYTES = 4
# Bytes per element of each element type a row's tensors can have.
ELEMENT_BYTES = {"f32": F32_BYTES, "bf16": 2}
BENCH_DIR = Path(__file__).resolve().parent
SPEC_DIR = BENCH_DIR / "specs"
# A kernel is read-dominated when its compulsory bytes are at least this many
# times its output's (so at least 15/16 of its traffic is reads).
READ_DOMINATED = 16
# The groups whose read-dominated rows are held to the read bandwidth.
READ_CEILING_GROUPS = ("shapes",)


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
    group: str = "core"  # core (4, 5) | shapes (27) | backward (21) | bf16 (22)
    # A gradient row (gradient()): attn-run --grad times @<func>_grad of the
    # spec of the row named `forward`; shapes and output stay the forward's
    # (the cotangent has the output's shape, each gradient its argument's).
    grad: bool = False
    forward: str = ""
    # A gradient row that takes the forward's saved statistics (attn-run
    # --grad-save-statistics: softmax's row log-sum-exp and output, which
    # SDPA's backward gets from its forward too; efficient attention's
    # normalized context, dk x dv, where autograd keeps both softmaxes'
    # weights and the context; linear attention's context and key sums,
    # where autograd keeps phi(K)^T V; external attention's weights, the
    # softmax over positions, which autograd keeps too).
    saved_statistics: bool = False
    # The element type of every tensor of the spec (ELEMENT_BYTES). A bf16
    # row (bf16_row()) names the row computing the same in f32, whose attn
    # time its speed-up is measured against.
    dtype: str = "f32"
    f32_twin: str = ""
    # A bf16 softmax row whose op opts into bf16 weights
    # ({attn.allow_bf16_products}, bf16_weights_row()).
    bf16_products: bool = False

    @property
    def spec(self) -> Path:
        """The spec attn-run reads: a gradient row's is its forward row's."""
        return SPEC_DIR / f"{self.forward or self.name}.mlir"

    @property
    def timed_func(self) -> str:
        """The function attn-run --bench times: func, or func_grad."""
        return f"{self.func}_grad" if self.grad else self.func

    @property
    def score_bytes(self) -> int:
        """Bytes of the kernel's score matrices over all problems, f32: what
        a gradient in the spec's form materializes (per matrix; attn's keeps
        several), the estimate bench/attn_bench.py uses when attn-opt cannot
        say. softmax: problems * n * m; linear attention (the spec's
        quadratic form; attn reassociates its gradient): n * m; external:
        n * S; efficient and deformable attention have none (0)."""
        p = self.params
        if self.family == "softmax":
            return F32_BYTES * p["problems"] * p["n"] * p["m"]
        if self.family == "linear":
            return F32_BYTES * p["n"] * p["m"]
        if self.family == "external":
            return F32_BYTES * p["n"] * p["slots"]
        return 0

    @property
    def element_bytes(self) -> int:
        """Bytes per element of the spec's tensors."""
        return ELEMENT_BYTES[self.dtype]

    @property
    def compute_ceiling(self) -> str:
        """'bf16_dot' if the compute term of the roofline uses the bf16
        dot-product peak (the bf16 softmax rows and the rows that opt into
        bf16 products; the module docstring says why), else 'fma'."""
        if self.dtype == "bf16" and (self.family == "softmax"
                                     or self.bf16_products):
            return "bf16_dot"
        return "fma"

    @property
    def gather_bytes(self) -> int:
        """Bytes a deformable row's bilinear samples must read: 4 corners of
        `depth` values per (query, head, level, point), each corner a row of
        the value tensor at a data-dependent offset (the gather ceiling of
        issue 24 divides them by the probe's gather bandwidth, measured on
        the same footprint); 0 for the other families and for gradient
        rows."""
        if self.family != "deformable" or self.grad:
            return 0
        p = self.params
        samples = (p["batch"] * p["queries"] * p["heads"] * len(p["levels"])
                   * p["points"])
        return self.element_bytes * 4 * p["depth"] * samples

    @property
    def intensity(self) -> float:
        """FLOPs per compulsory byte."""
        return self.flops / self.compulsory_bytes

    @property
    def output_bytes(self) -> int:
        """Bytes written: the output, or a gradient row's gradients."""
        if self.grad:
            return self.element_bytes * _elements(*self.shapes.values())
        return self.element_bytes * _elements(self.output)

    @property
    def memory_ceiling(self) -> str:
        """'read' if the bytes term of the roofline uses the read-only
        bandwidth (a read-dominated row of READ_CEILING_GROUPS), else
        'stream' (the larger of STREAM copy and triad)."""
        read_dominated = (READ_DOMINATED * self.output_bytes
                          <= self.compulsory_bytes)
        if self.group in READ_CEILING_GROUPS and read_dominated:
            return "read"
        return "stream"


def _elements(*shapes):
    total = 0
    for shape in shapes:
        count = 1
        for dim in shape:
            count *= dim
        total += count
    return total


def broadcast(*leads):
    """The numpy broadcast of leading dims: (8, 4) and (8, 1) give (8, 4)."""
    rank = max(len(lead) for lead in leads)
    padded = [(1,) * (rank - len(lead)) + tuple(lead) for lead in leads]
    result = []
    for dims in zip(*padded):
        sizes = {dim for dim in dims if dim != 1}
        if len(sizes) > 1:
            raise ValueError(f"leading dims {leads} do not broadcast")
        result.append(sizes.pop() if sizes else 1)
    return tuple(result)


def visible_scores(n, m, causal):
    """Scores per problem that take part: n * m, or with `causal` (key j
    visible to query i iff j <= i) sum over i of min(i + 1, m), which is
    n * (n + 1) / 2 when n = m."""
    if not causal:
        return n * m
    if n <= m:
        return n * (n + 1) // 2
    return m * (m + 1) // 2 + (n - m) * m


def softmax_attention(name, lead, n, m, dk, dv, scale, *, kv_lead=None,
                      bias_lead=None, causal=False, group="core", title=None):
    """O = softmax_keys(scale * Q K^T [+ bias], causal: keys j <= i) V.

    Q is lead + (n, dk), K and V kv_lead + (m, dk) and (m, dv) (default:
    lead), the additive bias bias_lead + (n, m) (none by default); leading
    dims broadcast as numpy's do (GQA: Q (8, 4, 1, d), K, V (8, 1, m, d)).
    The output is broadcast(lead, kv_lead, bias_lead) + (n, dv).

    FLOPs: Q K^T is n*m*dk MACs, P V is n*m*dv MACs, per problem (output
    leading index), only over the visible scores when causal.
    """
    lead = tuple(lead)
    kv_lead = lead if kv_lead is None else tuple(kv_lead)
    leads = [lead, kv_lead] + ([] if bias_lead is None else [tuple(bias_lead)])
    out_lead = broadcast(*leads)
    problems = _elements(out_lead)
    shapes = {"q": lead + (n, dk), "k": kv_lead + (m, dk),
              "v": kv_lead + (m, dv)}
    if bias_lead is not None:
        shapes["bias"] = tuple(bias_lead) + (n, m)
    output = out_lead + (n, dv)
    return Kernel(
        name=name,
        family="softmax",
        func=name,
        shapes=shapes,
        output=output,
        flops=2 * problems * visible_scores(n, m, causal) * (dk + dv),
        compulsory_bytes=F32_BYTES * _elements(*shapes.values(), output),
        params=dict(problems=problems, n=n, m=m, dk=dk, dv=dv, scale=scale,
                    causal=causal, q_lead=list(lead), kv_lead=list(kv_lead),
                    bias_lead=None if bias_lead is None else list(bias_lead),
                    title=title),
        group=group,
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


def gradient(kernel):
    """The gradient row of a forward row: attn-run --grad times
    @<func>_grad of the forward's spec (arguments: the forward's, then the
    cotangent dO of its output; results: the gradient of every argument),
    in group "backward", named <forward>_grad.

    FLOPs (2 per MAC; the module docstring has the rule: two products per
    forward product, plus the forward products whose value the backward
    needs, recomputed from the arguments, since the gradient gets nothing
    from a forward):

    - softmax: S = scale Q K^T recomputed (dk per score), P = softmax(S);
      dV = P^T dO (dv), dP = dO V^T (dv), dS = P * (dP - rowsum(P * dP)),
      dQ = scale dS K (dk), dK = scale dS^T Q (dk): (3 dk + 2 dv) MACs per
      visible score and problem, 2.5x the forward's (dk + dv) at dk = dv.
      P V (the output) is not needed: rowsum(dO * O) = rowsum(P * dP).
      attn's row takes the forward's saved lse and O, as SDPA's backward
      takes what its forward saved (--grad-save-statistics; the one-pass
      backward, docs/training.md): the same 5 products, S recomputed.
    - efficient: E = R_Q C gives dR_Q = dE C^T and dC = R_Q^T dE (n dk dv
      each), C = R_K^T V gives dR_K = V dC^T and dV = R_K dC (m dk dv
      each): (2 m + 2 n) dk dv MACs, 2x the forward's. attn's row takes
      the context C the forward saved (--grad-save-statistics), as the
      peers' backward takes what their forward kept; recomputing it
      (without the option) adds m dk dv.
    - linear: as efficient with the context C' = phi(K)^T [V 1] of dv + 1
      columns: (2 m + 2 n) dk (dv + 1) MACs. Exactly, the ones column of
      [V 1] needs no gradient (m dk fewer) and the normalizer
      phi(Q) (phi(K)^T 1) is recomputed from the saved key sums for the
      division's gradient (n dk more): equal at n = m. attn's row takes
      the context and key sums the forward saved (--grad-save-statistics),
      as autograd keeps phi(K)^T V; recomputing them (without the option)
      adds m dk (dv + 1). 2x the forward's.
    - external: dA' = dO Mv^T, dMv = A'^T dO, dX = dA Mk, dMk = dA^T X
      (n S d each): 4 n S d MACs (dv = d), 2x the forward's. attn's row
      takes the weights P = softmax over positions of X Mk^T that the
      forward saved (--grad-save-statistics), as autograd keeps them;
      recomputing them (without the option) adds n S d.
    - deformable: per (query, head, level, point, channel) the bilinear
      sample s = sum over 4 corners of b_c V_c recomputed (4 MACs); the
      weighted sum out = sum w s gives dw += dO s and ds = w dO (1 each),
      the sample gives dV_c += b_c ds (4) and db_c += V_c ds (4; the
      location gradient then takes O(1) per point from the 4 db_c, not
      per channel): 14 MACs, 28 FLOPs against the forward's 10 (2.8x).

    Compulsory bytes: the arguments and dO read once, the gradients (the
    arguments' shapes) written once.
    """
    p = kernel.params
    if kernel.family == "softmax":
        macs = (p["problems"] * visible_scores(p["n"], p["m"], p["causal"])
                * (3 * p["dk"] + 2 * p["dv"]))
    elif kernel.family == "efficient":
        macs = (2 * p["m"] + 2 * p["n"]) * p["dk"] * p["dv"]
    elif kernel.family == "linear":
        macs = (2 * p["m"] + 2 * p["n"]) * p["dk"] * (p["dv"] + 1)
    elif kernel.family == "external":
        macs = 4 * p["n"] * p["slots"] * p["d"]
    elif kernel.family == "deformable":
        macs = 14 * (p["batch"] * p["queries"] * p["heads"]
                     * len(p["levels"]) * p["points"] * p["depth"])
    else:
        raise ValueError(f"no gradient count for family {kernel.family}")
    arguments = _elements(*kernel.shapes.values())
    return replace(
        kernel, name=f"{kernel.name}_grad", group="backward", grad=True,
        forward=kernel.name, flops=2 * macs,
        saved_statistics=kernel.family in ("softmax", "efficient", "linear",
                                           "external"),
        compulsory_bytes=F32_BYTES * (2 * arguments + _elements(kernel.output)))


def bf16_row(kernel):
    """The bf16 row of a forward row: the same computation with every
    tensor bf16, in group "bf16", named <row>_bf16, its f32 twin `kernel`.
    FLOPs are the twin's, compulsory bytes the same elements at 2 bytes (the
    module docstring has the rules, and the compute ceiling)."""
    name = f"{kernel.name}_bf16"
    return replace(
        kernel, name=name, func=name, group="bf16", dtype="bf16",
        f32_twin=kernel.name,
        compulsory_bytes=ELEMENT_BYTES["bf16"] * _elements(
            *kernel.shapes.values(), kernel.output))


def bf16_weights_row(kernel):
    """The bf16 row of a softmax, efficient or linear row whose op opts into
    bf16 products ({attn.allow_bf16_products}, docs/precision.md): the
    weights (efficient: of both softmaxes, and the context; linear: phi(Q),
    phi(K) and the context) are rounded to bf16 before their products, as
    PyTorch's bf16 kernels round what a matmul reads, so every product runs
    on vdpbf16ps. Named <row>_bf16_weights; counts as bf16_row()."""
    return replace(bf16_row(kernel), name=f"{kernel.name}_bf16_weights",
                   func=f"{kernel.name}_bf16_weights", bf16_products=True)


# Deformable DETR's 4 feature levels for an 800 x 1200 input (strides 8-64).
DETR_LEVELS = [(100, 150), (50, 75), (25, 38), (13, 19)]

def _head_dim_row(dk, dv=None):
    """Issue 27's head-dim rows: 8 heads, n = m = 4096, scale 1/sqrt(dk)."""
    dv = dk if dv is None else dv
    name = f"h8_n4096_d{dk}" if dv == dk else f"h8_n4096_dk{dk}_dv{dv}"
    return softmax_attention(name, (8,), 4096, 4096, dk, dv, 1 / math.sqrt(dk),
                             group="shapes")


# The shapes of issue 4, item 6, and of issue 5, item 5 (group "core").
CORE_KERNELS = [
    softmax_attention("softmax_h8_n1024", (8,), 1024, 1024, 64, 64, 0.125),
    softmax_attention("softmax_h8_n4096", (8,), 4096, 4096, 64, 64, 0.125),
    *[efficient_attention(n, dk=32, dv=64) for n in (4096, 16384, 65536)],
    *[linear_attention(n, dk=32, dv=64) for n in (4096, 16384, 65536)],
    external_attention(n=4096, d=512, slots=64),
    # Encoder: every pixel of every level is a query; decoder: 300 queries.
    deformable_attention("deformable_encoder", DETR_LEVELS,
                         queries=sum(h * w for h, w in DETR_LEVELS)),
    deformable_attention("deformable_decoder", DETR_LEVELS, queries=300),
]

# Softmax attention at the shapes users run (issue 27, group "shapes"). Row
# names: the shape class (decode, gqa_decode, queries16, causal, window; none
# for plain prefill), then h<query heads>[kv<KV heads>] or b<batch>h<heads>,
# n<n> (n = m) or m<keys> (n given by the class), d<dk = dv> or
# dk<dk>_dv<dv> (left out at d = 64 in the decode and queries16 rows), then
# _bias with an additive bias. FLOPs and bytes: see the module docstring.
SHAPE_KERNELS = [
    softmax_attention("decode_h8_m32768", (8,), 1, 32768, 64, 64, 0.125,
                      group="shapes", title="LLM decode"),
    softmax_attention("decode_h1_m262144", (1,), 1, 262144, 64, 64, 0.125,
                      group="shapes", title="LLM decode, long context"),
    softmax_attention("gqa_decode_h32kv8_m8192_d128", (8, 4), 1, 8192, 128,
                      128, 1 / math.sqrt(128), kv_lead=(8, 1), group="shapes",
                      title="grouped-query decode, 32 query heads on 8 KV "
                      "heads (K and V broadcast over the 4 query heads of a "
                      "group)"),
    softmax_attention("queries16_h8_m32768", (8,), 16, 32768, 64, 64, 0.125,
                      group="shapes", title="16 queries on a long context"),
    softmax_attention("causal_h8_n4096", (8,), 4096, 4096, 64, 64, 0.125,
                      causal=True, group="shapes", title="causal prefill"),
    softmax_attention("window_b64h3_n49_d32_bias", (64, 3), 49, 49, 32, 32,
                      1 / math.sqrt(32), bias_lead=(1, 3), group="shapes",
                      title="window attention (Swin), 64 windows x 3 heads of "
                      "7 x 7 tokens, relative-position bias broadcast over "
                      "the windows"),
    *[_head_dim_row(d) for d in (128, 32, 80, 96, 256)],
    _head_dim_row(128, 64),
    softmax_attention("h32_n512_d64", (32,), 512, 512, 64, 64, 0.125,
                      group="shapes"),
]

_CORE_BY_NAME = {kernel.name: kernel for kernel in CORE_KERNELS}
# The gradients of issue 21, item 8 (group "backward"): attn-run --grad of
# these core rows' specs against torch.autograd. Row names: <forward>_grad.
BACKWARD_KERNELS = [
    gradient(_CORE_BY_NAME[name])
    for name in ("softmax_h8_n1024", "softmax_h8_n4096", "efficient_n65536",
                 "linear_n65536", "external_n4096", "deformable_encoder")]

# The bf16 rows of issue 22, item 5 (group "bf16"): these core rows with
# every tensor bf16, against PyTorch on bf16 tensors and attn's f32 twin.
BF16_KERNELS = [
    bf16_row(_CORE_BY_NAME[name])
    for name in ("softmax_h8_n1024", "softmax_h8_n4096", "efficient_n65536",
                 "linear_n65536", "deformable_encoder")] + [
    bf16_weights_row(_CORE_BY_NAME[name])
    for name in ("softmax_h8_n1024", "softmax_h8_n4096", "efficient_n65536",
                 "linear_n65536")]

KERNELS = CORE_KERNELS + SHAPE_KERNELS + BACKWARD_KERNELS + BF16_KERNELS
KERNELS_BY_NAME = {kernel.name: kernel for kernel in KERNELS}
GROUPS = {}
for _kernel in KERNELS:
    GROUPS.setdefault(_kernel.group, []).append(_kernel)
assert len(KERNELS_BY_NAME) == len(KERNELS), "duplicate kernel names"
assert not set(GROUPS) & set(KERNELS_BY_NAME), "a group named like a kernel"
assert all(KERNELS_BY_NAME.get(kernel.forward) for kernel in KERNELS
           if kernel.grad), "a gradient row without its forward row"
assert all(KERNELS_BY_NAME.get(kernel.f32_twin, kernel).dtype == "f32"
           for kernel in KERNELS if kernel.dtype != "f32"), \
    "a reduced-precision row without its f32 twin"


def select(names):
    """The kernels a comma-separated list of kernel and group names selects
    (BENCH_KERNELS), in the list's order, each once; all of them for an empty
    list. A bf16 row brings its f32 twin (just before it, unless selected
    earlier): its speed-up over attn's f32 kernel is measured in the same
    run. Raises ValueError naming what is unknown."""
    selected = []
    unknown = []
    for name in (part.strip() for part in names.split(",")):
        if not name:
            continue
        if name in GROUPS:
            selected.extend(GROUPS[name])
        elif name in KERNELS_BY_NAME:
            selected.append(KERNELS_BY_NAME[name])
        else:
            unknown.append(name)
    if unknown:
        raise ValueError(f"unknown kernel(s) or group(s) {', '.join(unknown)}; "
                         f"groups: {', '.join(GROUPS)}; kernels: "
                         + ", ".join(KERNELS_BY_NAME))
    if not selected:
        return list(KERNELS)
    with_twins = []
    for kernel in selected:
        if kernel.f32_twin:
            with_twins.append(KERNELS_BY_NAME[kernel.f32_twin])
        with_twins.append(kernel)
    return list({kernel.name: kernel for kernel in with_twins}.values())


def memory_bandwidth(kernel, stream_gbs, read_gbs=None):
    """The bandwidth of the kernel's bytes term: the read bandwidth for a
    kernel whose memory_ceiling is 'read' (when the probe measured one),
    else the stream bandwidth."""
    if kernel.memory_ceiling == "read" and read_gbs:
        return read_gbs
    return stream_gbs


def compute_peak(kernel, fma_peak_gflops, bf16_dot_gflops=None):
    """(GFLOP/s, 'fma' or 'bf16_dot') of the kernel's compute term: the bf16
    dot-product peak for a kernel whose compute_ceiling is 'bf16_dot' (when
    the probe measured one above the FMA peak), else the FMA peak. Where
    vdpbf16ps is the slower of the two (Sapphire Rapids class Intel cores),
    attn multiplies bf16 on FMAs (docs/precision.md), and the ceiling of a
    bf16 product is the faster instruction's."""
    if (kernel.compute_ceiling == "bf16_dot" and bf16_dot_gflops
            and bf16_dot_gflops > fma_peak_gflops):
        return bf16_dot_gflops, "bf16_dot"
    return fma_peak_gflops, "fma"


def roofline_seconds(kernel, fma_peak_gflops, stream_gbs, read_gbs=None,
                     bf16_dot_gflops=None):
    """max(FLOPs / compute peak, compulsory bytes / bandwidth), the peak per
    compute_peak(), the bandwidth per memory_bandwidth()."""
    peak, _ = compute_peak(kernel, fma_peak_gflops, bf16_dot_gflops)
    bandwidth = memory_bandwidth(kernel, stream_gbs, read_gbs)
    return max(kernel.flops / (peak * 1e9),
               kernel.compulsory_bytes / (bandwidth * 1e9))


def bound(kernel, fma_peak_gflops, stream_gbs, read_gbs=None,
          bf16_dot_gflops=None):
    """'compute' or 'memory': which ceiling sets the roofline time."""
    peak, _ = compute_peak(kernel, fma_peak_gflops, bf16_dot_gflops)
    compute = kernel.flops / (peak * 1e9)
    memory = kernel.compulsory_bytes / (
        memory_bandwidth(kernel, stream_gbs, read_gbs) * 1e9)
    return "compute" if compute >= memory else "memory"


def ceiling(kernel, fma_peak_gflops, stream_gbs, read_gbs=None,
            bf16_dot_gflops=None):
    """The ceiling the kernel is measured against: 'compute' (FMA peak),
    'bf16_dot' (bf16 dot-product peak), 'read' (read bandwidth) or 'stream'
    (stream bandwidth)."""
    if bound(kernel, fma_peak_gflops, stream_gbs, read_gbs,
             bf16_dot_gflops) == "compute":
        _, peak = compute_peak(kernel, fma_peak_gflops, bf16_dot_gflops)
        return "compute" if peak == "fma" else peak
    return "read" if kernel.memory_ceiling == "read" and read_gbs else "stream"


def _tensor(shape, dtype="f32"):
    return "tensor<" + "x".join(str(dim) for dim in shape) + f"x{dtype}>"


def _softmax_header(kernel):
    """The spec's comment: what the softmax row is and its formula."""
    p = kernel.params
    q, k, v = kernel.shapes["q"], kernel.shapes["k"], kernel.shapes["v"]
    lead, n, m, dk, dv = tuple(p["q_lead"]), p["n"], p["m"], p["dk"], p["dv"]
    if len(lead) == 1 and k[:-2] == lead and "bias" not in kernel.shapes:
        shape = (f"{lead[0]} head{'s' if lead[0] > 1 else ''}, "
                 + (f"n = m = {n}" if n == m else f"n = {n}, m = {m}") + ", "
                 + (f"dk = dv = {dk}" if dk == dv else f"dk = {dk}, dv = {dv}"))
    else:
        dims = lambda shape: "x".join(str(dim) for dim in shape)  # noqa: E731
        shape = f"Q {dims(q)}, K {dims(k)}, V {dims(v)}"
        if "bias" in kernel.shapes:
            shape += f", additive bias {dims(kernel.shapes['bias'])}"
    title = f"{p['title']}, " if p.get("title") else ""
    bias = " + bias" if "bias" in kernel.shapes else ""
    causal = (" (causal: key j visible to query i iff j <= i)"
              if p["causal"] else "")
    return (f"Softmax attention, {title}{shape}:\n"
            f"//   O = softmax_keys({p['scale']} * Q K^T{bias}) V{causal}")


def render_spec(kernel):
    """The attn spec of a kernel: bench/specs/<name>.mlir holds exactly this
    text (`python3 bench/kernels.py --write-specs` rewrites the files,
    `--check-specs` fails if they differ), so shapes live only here. A
    gradient row has no spec of its own: this is its forward's text. A bf16
    row's is its f32 twin's with every tensor bf16 (and its own name)."""
    p = kernel.params
    name = kernel.forward or kernel.name
    dtype = kernel.dtype
    args = ", ".join(f"%{name}: {_tensor(shape, dtype)}"
                     for name, shape in kernel.shapes.items())
    arg_types = ", ".join(_tensor(shape, dtype)
                          for shape in kernel.shapes.values())
    result = _tensor(kernel.output, dtype)
    operands = ", ".join(f"%{name}" for name in kernel.shapes)
    if kernel.family == "softmax":
        header = _softmax_header(kernel)
        mask = " mask %bias" if "bias" in kernel.shapes else ""
        operands = ", ".join(f"%{name}" for name in ("q", "k", "v"))
        op = (f"attn.dot_product {operands}{mask} norm [softmax over keys] "
              f"scale {p['scale']}" + (" causal" if p["causal"] else "")
              + (" {attn.allow_bf16_products}" if kernel.bf16_products
                 else ""))
    elif kernel.family == "efficient":
        header = (f"Efficient attention, softmax variant (Shen et al.), "
                  f"n = {p['n']}, dk = {p['dk']}, dv = {p['dv']}:\n"
                  "//   E = softmax_features(Q) (softmax_positions(K)^T V)")
        op = (f"attn.efficient {operands} variant softmax"
              + (" {attn.allow_bf16_products}" if kernel.bf16_products
                 else ""))
    elif kernel.family == "linear":
        header = (f"Linear attention (Katharopoulos et al.), n = m = {p['n']}, "
                  f"dk = {p['dk']}, dv = {p['dv']}, phi = elu + 1:\n"
                  "//   O = phi(Q) (phi(K)^T V) / phi(Q) (phi(K)^T 1)")
        op = (f"attn.dot_product {operands} norm [sum over keys] "
              "feature_map elu_plus_one"
              + (" {attn.allow_bf16_products}" if kernel.bf16_products
                 else ""))
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
    if dtype != "f32":
        header += (f"\n// Every tensor {dtype} (storage; the arithmetic is "
                   "f32, docs/precision.md).")
    if kernel.bf16_products and kernel.family == "efficient":
        header += ("\n// The weights of both softmaxes and the context are "
                   "rounded to bf16 before\n// their products "
                   "(attn.allow_bf16_products, docs/precision.md).")
    elif kernel.bf16_products and kernel.family == "linear":
        header += ("\n// phi(K), phi(Q) and the context are rounded to bf16 "
                   "before their products\n// (attn.allow_bf16_products, "
                   "docs/precision.md).")
    elif kernel.bf16_products:
        header += ("\n// The weights are rounded to bf16 before P V "
                   "(attn.allow_bf16_products, docs/precision.md).")
    return (f"// Benchmark kernel {name} (bench/kernels.py renders this "
            f"file).\n// {header}\n"
            f"func.func @{kernel.func}({args}) -> {result} {{\n"
            f"  %o = {op}\n"
            f"      : {arg_types} -> {result}\n"
            f"  return %o : {result}\n}}\n")


def check_specs(write):
    """Compares (or with write=True, rewrites) bench/specs/*.mlir."""
    stale = []
    for kernel in KERNELS:
        if kernel.grad:
            continue  # its spec is its forward row's
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
    if len(sys.argv) == 3 and sys.argv[1] == "--select":
        # The rows BENCH_KERNELS selects (bench/run.sh checks it first).
        try:
            print("\n".join(kernel.name for kernel in select(sys.argv[2])))
        except ValueError as error:
            sys.exit(f"bench: BENCH_KERNELS: {error}")
        sys.exit(0)
    if sys.argv[1:] == ["--gather-table"]:
        # The probe's gather table (bench/run.sh): the deformable encoder's
        # value tensor, its bytes, the floats of one gathered row (D), of
        # one pixel (heads x D) and its levels (HxW,...).
        encoder = KERNELS_BY_NAME["deformable_encoder"]
        p = encoder.params
        print(encoder.element_bytes * _elements(encoder.shapes["value"]),
              p["depth"], p["heads"] * p["depth"],
              ",".join(f"{h}x{w}" for h, w in p["levels"]))
        sys.exit(0)
    if sys.argv[1:]:
        sys.exit("usage: kernels.py [--write-specs | --check-specs | "
                 "--gather-table | --select NAMES]")
    # A quick look at the table of work: python3 bench/kernels.py
    width = max(len(kernel.name) for kernel in KERNELS)
    print(f"{'kernel':<{width}} {'group':<8} {'GFLOP':>9} {'MB':>9} "
          f"{'FLOP/B':>7} {'memory':<6} {'compute':<8}  spec")
    for kernel in KERNELS:
        print(f"{kernel.name:<{width}} {kernel.group:<8} "
              f"{kernel.flops / 1e9:9.3f} "
              f"{kernel.compulsory_bytes / 1e6:9.2f} {kernel.intensity:7.1f} "
              f"{kernel.memory_ceiling:<6} {kernel.compute_ceiling:<8}  "
              f"{kernel.spec.relative_to(BENCH_DIR.parent)}"
              + (" --grad" if kernel.grad else "")
              + (f" (f32 twin {kernel.f32_twin})" if kernel.f32_twin else ""))
