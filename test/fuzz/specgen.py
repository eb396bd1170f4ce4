"""Random valid attn specs, drawn from the ops' shape rules.

The rules are those of dialect/AttnShapes.cpp (docs/dialect-reference.md):
every op of the dialect, with its attributes (normalization lists, causal,
masks, feature maps, scales, variants, levels, transposes, dims, eps),
leading dims that broadcast, static sizes around the schedules' thresholds,
odd sizes, and dynamic (`?`) dims that `attn-run --dynamic-size N` sizes at
run time. Inputs are `attn-run --random` values, uniform in [0, 1); a spec
keeps every value that reaches a `sum` normalization or a divisor
nonnegative, so its result is well conditioned and the kernel must match the
reference within `attn-run --check`'s tolerance.

    generate(random.Random(seed), thresholds) -> Spec
"""

# Sizes of a dim that is not a threshold probe; mostly small and odd.
SIZES = [1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 24, 31, 32, 33, 48, 64, 65]
LEAD_SIZES = [1, 1, 2, 3]
DYNAMIC_SIZES = [1, 2, 3, 5, 7, 8, 16, 17, 33]
# Multiply-adds of the reference's naive loops per spec (the reference runs
# at about 1 GMAC/s in f64; a gradient costs a few forwards).
MAX_MACS = 4.0e6
# Finite differences (`--check-grad`) evaluate the forward twice per input
# element: only for specs this small.
MAX_CHECK_GRAD_MACS = 2.0e4
MAX_CHECK_GRAD_INPUTS = 600
F32_COMPUTED = ["f32", "bf16", "f16"]
FEATURE_MAPS = ["identity", "elu_plus_one", "relu"]
NORM_KINDS = ["softmax", "sum", "count", "none"]
LEVEL_SIZES = [1, 2, 3, 4, 5, 7]


class Dim:
    """One dim of one tensor type: its size at run time and whether the
    type writes it as `?`."""

    __slots__ = ("size", "dynamic")

    def __init__(self, size, dynamic=False):
        self.size = size
        self.dynamic = dynamic

    def text(self):
        return "?" if self.dynamic else str(self.size)

    def is_static_one(self):
        return not self.dynamic and self.size == 1


def unify(a, b):
    """Two dims that must agree (or broadcast), as AttnShapes.cpp merges
    them: a static 1 stretches, a dynamic dim takes the other's value."""
    if a.is_static_one():
        return b
    if b.is_static_one() or not a.dynamic:
        return a
    return b


def broadcast(*shapes):
    rank = max(len(s) for s in shapes)
    result = [Dim(1)] * rank
    for shape in shapes:
        padded = [Dim(1)] * (rank - len(shape)) + list(shape)
        result = [unify(r, d) for r, d in zip(result, padded)]
    return result


class Value:
    """An SSA value: its name, shape (a list of Dim) and element type.
    `signed` says it may hold negative values."""

    def __init__(self, name, shape, dtype, signed=False):
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.signed = signed

    @property
    def type(self):
        dims = "".join(d.text() + "x" for d in self.shape)
        return f"tensor<{dims}{self.dtype}>"


class Spec:
    """A generated function @f and how attn-run should run it."""

    def __init__(self, text, family, dynamic_size, differentiable, macs,
                 input_elements, smooth):
        self.text = text
        self.family = family
        self.dynamic_size = dynamic_size
        self.differentiable = differentiable
        self.macs = macs
        # Finite differences are meaningful only away from kinks and jumps,
        # and of f32 or f64 values (attn-run refuses 16-bit ones).
        self.check_grad = (smooth and differentiable and macs <= MAX_CHECK_GRAD_MACS
                           and input_elements <= MAX_CHECK_GRAD_INPUTS
                           and "f16>" not in text)


class Builder:
    """Builds the body of @f op by op."""

    def __init__(self, rng, dtype, dynamic_size, probes):
        self.rng = rng
        self.dtype = dtype
        self.dynamic_size = dynamic_size
        self.probes = probes  # {axis: [sizes around codegen's thresholds]}
        self.args = []
        # Argument names of several forms (codegen names its buffers after
        # them, and Halide has names of its own, e.g. a1 or t3).
        self.prefix = rng.choice(["%a", "%arg", "%in_", "%t", "%x"])
        self.lines = []
        self.count = 0
        self.macs = 0
        self.differentiable = True
        self.smooth = True

    # -- sizes ---------------------------------------------------------------

    def size(self, axis=None, pool=SIZES):
        """A dim of a fresh size: dynamic (`--dynamic-size`) now and then,
        a threshold probe of `axis` now and then, else from `pool`."""
        rng = self.rng
        if self.dynamic_size is not None and rng.random() < 0.35:
            return Dim(self.dynamic_size, True)
        if axis and self.probes.get(axis) and rng.random() < 0.2:
            return Dim(rng.choice(self.probes[axis]))
        return Dim(rng.choice(pool))

    def lead(self):
        """Leading (batch, head) dims: none to three."""
        return [self.size(pool=LEAD_SIZES) for _ in range(self.rng.choice([0, 0, 1, 1, 2, 3]))]

    def broadcastable(self, lead):
        """Leading dims that broadcast against `lead`: some of its dims
        replaced by 1, or fewer of them."""
        rng = self.rng
        if rng.random() < 0.5:
            return list(lead)
        out = [Dim(1) if rng.random() < 0.4 else d for d in lead]
        return out[rng.randrange(len(out) + 1):] if rng.random() < 0.4 else out

    def same(self, dim):
        """`dim` again in another operand's type, sometimes written static
        where the other writes `?` (or the reverse) as verifiers allow. An
        argument's `?` is sized `--dynamic-size` at run time, so only a dim
        of that size may be written `?`. A static 1 stays static: it may be
        a broadcast dim, which a `?` sized --dynamic-size would no longer
        be (the sizes fuzzer tries a dynamic 1)."""
        if dim.is_static_one():
            return Dim(1)
        dynamic = dim.dynamic and dim.size == self.dynamic_size
        if dim.size == self.dynamic_size and self.rng.random() < 0.15:
            dynamic = not dynamic
        return Dim(dim.size, dynamic)

    def shape_like(self, shape):
        return [self.same(d) for d in shape]

    # -- values --------------------------------------------------------------

    def arg(self, shape, dtype=None, no_grad=False):
        value = Value(f"{self.prefix}{len(self.args)}", shape, dtype or self.dtype)
        self.args.append((value, no_grad))
        return value

    def result_type(self, shape, dtype):
        """The declared result type: the inferred one, now and then more or
        less static (compatible either way), or another f32-computed type."""
        rng = self.rng
        declared = []
        for d in shape:
            if rng.random() < 0.08:
                declared.append(Dim(d.size, not d.dynamic))
            else:
                declared.append(d)
        if dtype in F32_COMPUTED and rng.random() < 0.1:
            dtype = rng.choice(F32_COMPUTED)
        return declared, dtype

    def op(self, text, operands, shape, signed=False, fixed_type=False, vary=False):
        """`%r = <text> : <operand types> -> <result type>`; `fixed_type`:
        the op prints one type (SameOperandsAndResultType); `vary`: declare
        the result type more or less static or of another f32-computed type
        (only where no later op needs the inferred element type)."""
        self.count += 1
        dtype = operands[0].dtype
        if vary and not fixed_type:
            shape, dtype = self.result_type(shape, dtype)
        result = Value(f"%v{self.count}", shape, dtype, signed)
        types = ", ".join(o.type for o in operands)
        if fixed_type:
            self.lines.append(f"  {result.name} = {text} : {operands[0].type}")
        else:
            self.lines.append(f"  {result.name} = {text}\n      : {types} -> {result.type}")
        return result

    def final(self, text, operands, shape, signed=False):
        """A family's result op (see `op`, `vary`)."""
        return self.op(text, operands, shape, signed, vary=True)

    def ops3(self, text, operands, shapes):
        """An op with three results (the fused gradient ops)."""
        self.count += 1
        results = [Value(f"%v{self.count}_{i}", s, operands[0].dtype)
                   for i, s in enumerate(shapes)]
        names = ", ".join(r.name for r in results)
        types = ", ".join(o.type for o in operands)
        out = ", ".join(r.type for r in results)
        self.lines.append(f"  {names} = {text}\n      : {types}\n      -> {out}")
        return results

    def centered(self, shape):
        """An input in (-1, 1): the difference of two arguments."""
        x, y = self.arg(shape), self.arg(self.shape_like(shape))
        neg = self.op(f"attn.scale {y.name} by -1.0", [y], y.shape, signed=True,
                      fixed_type=True)
        return self.op(f"attn.add {x.name}, {neg.name}", [x, neg],
                       broadcast(x.shape, neg.shape), signed=True)

    def text(self, results):
        args = ", ".join(f"{v.name}: {v.type}" + (" {attn.no_grad}" if no_grad else "")
                         for v, no_grad in self.args)
        types = ", ".join(r.type for r in results)
        returns = f"({types})" if len(results) > 1 else types
        names = ", ".join(r.name for r in results)
        return (f"func.func @f({args}) -> {returns} {{\n" + "\n".join(self.lines) +
                f"\n  return {names} : {types}\n}}\n")


def numel(shape):
    n = 1
    for d in shape:
        n *= d.size
    return n


def fmt(x):
    return f"{x:.6e}"


# ----------------------------------------------------------------------------
# Families: each adds its ops to a Builder and returns the results.
# ----------------------------------------------------------------------------


def norm_list(rng):
    """One to three steps; a `sum` only where the scores are nonnegative."""
    steps = []
    for _ in range(rng.choice([1, 1, 1, 2, 2, 3])):
        kind = rng.choice(NORM_KINDS)
        axis = rng.choice(["keys", "keys", "queries"])
        step = f"{kind} over {axis}"
        if kind == "sum" and rng.random() < 0.7:
            step += " eps " + fmt(rng.choice([1e-9, 1e-6, 1e-3, 0.5]))
        steps.append(step)
    return steps


def attention_operands(b, with_mask):
    """Q, K, V (and a mask) with broadcasting leading dims."""
    rng = b.rng
    lead = b.lead()
    n, m = b.size("queries"), b.size("keys")
    dk, dv = b.size("features"), b.size("features")
    q = b.arg(b.broadcastable(lead) + [n, dk])
    kv_lead = b.broadcastable(lead)
    k = b.arg(b.shape_like(kv_lead) + [m, b.same(dk)])
    v = b.arg(b.shape_like(kv_lead) + [b.same(m), dv])
    mask = None
    if with_mask:
        mask = b.arg(b.broadcastable(lead) + [b.same(n), b.same(m)],
                     no_grad=rng.random() < 0.5)
    out = broadcast(q.shape[:-2], k.shape[:-2], v.shape[:-2],
                    *([mask.shape[:-2]] if mask else [])) + [q.shape[-2], v.shape[-1]]
    b.macs += numel(out[:-2]) * n.size * m.size * (dk.size + dv.size)
    return q, k, v, mask, out


def dot_product(b):
    rng = b.rng
    q, k, v, mask, out = attention_operands(b, rng.random() < 0.25)
    steps = norm_list(rng)
    text = f"attn.dot_product {q.name}, {k.name}, {v.name}"
    operands = [q, k, v]
    if mask:
        text += f" mask {mask.name}"
        operands.append(mask)
    text += f" norm [{', '.join(steps)}]"
    if rng.random() < 0.6:
        # Scores feed a sum only while nonnegative: a negative scale only
        # where a softmax comes first or no sum follows.
        first_sum = next((i for i, s in enumerate(steps) if s.startswith("sum")), None)
        first_softmax = next((i for i, s in enumerate(steps)
                              if s.startswith("softmax")), len(steps))
        negative_ok = first_sum is None or first_softmax < first_sum
        scale = rng.choice([0.125, 0.5, 1.0, 2.0, 0.0625])
        if negative_ok and rng.random() < 0.3:
            scale = -scale
        text += " scale " + fmt(scale)
    if rng.random() < 0.4:
        fm = rng.choice(FEATURE_MAPS)
        text += f" feature_map {fm}"
        b.smooth = b.smooth and fm != "relu"
    if rng.random() < 0.35:
        text += " causal"
    return [b.final(text, operands, out)]


def efficient(b):
    q, k, v, _, out = attention_operands(b, False)
    variant = b.rng.choice(["softmax", "scaling"])
    return [b.final(f"attn.efficient {q.name}, {k.name}, {v.name} variant {variant}",
                 [q, k, v], out)]


def external(b):
    rng = b.rng
    lead = b.lead()
    n, slots, d, dv = b.size("queries"), b.size("keys"), b.size("features"), b.size("features")
    x = b.arg(lead + [n, d])
    mem_lead = b.broadcastable(lead) if rng.random() < 0.3 else []
    mk = b.arg(mem_lead + [slots, b.same(d)])
    mv = b.arg(b.shape_like(mem_lead) + [b.same(slots), dv])
    out = broadcast(x.shape[:-2], mk.shape[:-2], mv.shape[:-2]) + [x.shape[-2], dv]
    b.macs += numel(out[:-2]) * n.size * slots.size * (d.size + dv.size)
    eps = f" eps {fmt(rng.choice([0.0, 1e-9, 1e-3]))}" if rng.random() < 0.4 else ""
    return [b.final(f"attn.external {x.name}, {mk.name}, {mv.name}{eps}", [x, mk, mv], out)]


def sampling_dims(b):
    """(N, Lq, M, P, D), the levels and the value's positions."""
    rng = b.rng
    levels = [(rng.choice(LEVEL_SIZES), rng.choice(LEVEL_SIZES))
              for _ in range(rng.choice([1, 1, 2, 3]))]
    pixels = sum(h * w for h, w in levels)
    dims = {"batch": b.size(pool=[1, 2]), "queries": b.size("queries", [1, 2, 3, 5, 8, 17]),
            "heads": b.size(pool=[1, 2, 3]), "points": b.size(pool=[1, 2, 4]),
            "channels": b.size("channels", [1, 2, 3, 4, 8, 13, 32])}
    level_text = ", ".join(f"{h}x{w}" for h, w in levels)
    positions = Dim(pixels, b.dynamic_size == pixels and rng.random() < 0.5)
    return dims, levels, level_text, positions


def sampling_shapes(b, dims, levels, positions):
    d = dims
    value = [b.same(d["batch"]), positions, b.same(d["heads"]), b.same(d["channels"])]
    samples = [b.same(d["batch"]), b.same(d["queries"]), b.same(d["heads"]),
               Dim(len(levels)), b.same(d["points"])]
    return value, samples


def deformable_operands(b):
    """value, locations and weights of attn.deformable and its gradient,
    the result's merged heads x channels dim, the levels and align_corners."""
    dims, levels, level_text, positions = sampling_dims(b)
    value, samples = sampling_shapes(b, dims, levels, positions)
    v = b.arg(value)
    loc = b.arg(samples + [Dim(2)])
    w = b.arg(b.shape_like(samples))
    heads, ch = v.shape[2], v.shape[3]
    # `?` only where the run-time size (--dynamic-size) is the product: a
    # dynamic heads or channels dim makes the product dynamic too, but
    # written `?` it would be sized --dynamic-size, not heads x channels.
    size = heads.size * ch.size
    merged = Dim(size, (heads.dynamic or ch.dynamic) and size == b.dynamic_size)
    attrs = f"levels [{level_text}]" + (" align_corners" if b.rng.random() < 0.4 else "")
    b.smooth = False  # bilinear weights have kinks at pixel boundaries
    return v, loc, w, merged, attrs, positions


def deformable(b):
    v, loc, w, merged, attrs, _ = deformable_operands(b)
    out = [unify(v.shape[0], loc.shape[0]), loc.shape[1], merged]
    b.macs += numel(w.shape) * v.shape[3].size * 8
    return [b.final(f"attn.deformable {v.name}, {loc.name}, {w.name} {attrs}",
                    [v, loc, w], out)]


def bilinear_gather(b):
    rng = b.rng
    dims, levels, level_text, positions = sampling_dims(b)
    value, samples = sampling_shapes(b, dims, levels, positions)
    v = b.arg(value)
    loc = b.arg(samples + [Dim(2)])
    out = [unify(v.shape[0], loc.shape[0])] + loc.shape[1:5] + [v.shape[3]]
    ac = " align_corners" if rng.random() < 0.4 else ""
    b.macs += numel(samples) * v.shape[3].size * 8
    b.smooth = False
    result = b.final(f"attn.bilinear_gather {v.name}, {loc.name} levels [{level_text}]{ac}",
                     [v, loc], out)
    # --attn-grad has no rule for it with dynamic sizes (docs/training.md).
    b.differentiable = not any(d.dynamic for d in v.shape + loc.shape + result.shape)
    return [result]


def pixels_of(b, samples, levels):
    """Integer pixel coordinates, some outside their level:
    floor(loc * s) + floor(-loc) = floor(loc * s) - 1 (for loc in (0, 1)),
    with s a little more than the widest level."""
    loc = b.arg(samples + [Dim(2)])
    span = max(max(h, w) for h, w in levels) + 2
    scaled = b.op(f"attn.scale {loc.name} by {fmt(span)}", [loc], loc.shape, fixed_type=True)
    floor = b.op(f"attn.floor {scaled.name}", [scaled], scaled.shape, fixed_type=True)
    minus = b.op(f"attn.scale {loc.name} by -1.0", [loc], loc.shape, signed=True,
                 fixed_type=True)
    minus_one = b.op(f"attn.floor {minus.name}", [minus], minus.shape, signed=True,
                     fixed_type=True)
    return b.op(f"attn.add {floor.name}, {minus_one.name}", [floor, minus_one],
                floor.shape, signed=True)


def gather_pixels(b):
    dims, levels, level_text, positions = sampling_dims(b)
    value, samples = sampling_shapes(b, dims, levels, positions)
    v = b.arg(value)
    pixels = pixels_of(b, samples, levels)
    out = [unify(v.shape[0], pixels.shape[0])] + pixels.shape[1:5] + [v.shape[3]]
    b.macs += numel(samples) * v.shape[3].size
    b.smooth = False
    return [b.final(f"attn.gather_pixels {v.name}, {pixels.name} levels [{level_text}]",
                 [v, pixels], out)]


def scatter_pixels(b):
    dims, levels, level_text, positions = sampling_dims(b)
    _, samples = sampling_shapes(b, dims, levels, positions)
    ct = b.arg(samples + [b.same(dims["channels"])])
    pixels = pixels_of(b, b.shape_like(samples), levels)
    b.differentiable = False  # an adjoint op: no rule of its own (docs/training.md)
    out = [unify(ct.shape[0], pixels.shape[0]), Dim(positions.size),
           unify(ct.shape[2], pixels.shape[2]), ct.shape[5]]
    b.macs += numel(ct.shape)
    b.smooth = False
    return [b.final(f"attn.scatter_pixels {ct.name}, {pixels.name} levels [{level_text}]",
                 [ct, pixels], out)]


def matmul(b):
    rng = b.rng
    lead = b.lead()
    rows, depth, cols = b.size("queries"), b.size("keys"), b.size("features")
    tl, tr = rng.random() < 0.3, rng.random() < 0.4
    lhs = b.arg(b.broadcastable(lead) + ([depth, rows] if tl else [rows, depth]))
    rhs_depth = b.same(depth)
    rhs = b.arg(b.broadcastable(lead) + ([cols, rhs_depth] if tr else [rhs_depth, cols]))
    out = broadcast(lhs.shape[:-2], rhs.shape[:-2]) + [
        lhs.shape[-1] if tl else lhs.shape[-2], rhs.shape[-2] if tr else rhs.shape[-1]]
    b.macs += numel(out) * depth.size
    flags = (" transpose_lhs" if tl else "") + (" transpose_rhs" if tr else "")
    return [b.final(f"attn.matmul {lhs.name}, {rhs.name}{flags}", [lhs, rhs], out)]


def plain_shape(b):
    """A tensor of rank 1 to 4 for the elementwise and reduction ops."""
    rank = b.rng.choice([1, 2, 2, 2, 3, 4])
    axes = ["keys", "features", "queries", "keys"]
    return [b.size(axes[i % 4]) for i in range(rank)]


def normalize(b):
    rng = b.rng
    x = b.arg(plain_shape(b))
    kind = rng.choice(NORM_KINDS)
    dim = rng.randrange(len(x.shape))
    eps = f" eps {fmt(rng.choice([0.0, 1e-6, 1e-2]))}" if kind == "sum" else ""
    b.macs += numel(x.shape) * 4
    return [b.op(f"attn.normalize {kind} {x.name} dim {dim}{eps}", [x], x.shape,
                 fixed_type=True)]


def prefix_sum(b):
    rng = b.rng
    x = b.arg(plain_shape(b))
    dim = rng.randrange(len(x.shape))
    flags = (" exclusive" if rng.random() < 0.5 else "") + (" reverse" if rng.random() < 0.5 else "")
    b.macs += numel(x.shape)
    return [b.op(f"attn.prefix_sum {x.name} dim {dim}{flags}", [x], x.shape, fixed_type=True)]


def reduce_sum(b):
    x = b.arg(plain_shape(b))
    dim = b.rng.randrange(len(x.shape))
    out = list(x.shape)
    out[dim] = Dim(1)
    b.macs += numel(x.shape)
    return [b.final(f"attn.reduce_sum {x.name} dim {dim}", [x], out)]


def elementwise_unary(b):
    """scale, feature_map, floor, causal_mask of a value in (-1, 1)."""
    rng = b.rng
    shape = plain_shape(b)
    if len(shape) < 2:
        shape.append(b.size("keys"))
    x = b.centered(shape)
    b.macs += numel(shape) * 3
    choice = rng.choice(["scale", "feature_map", "floor", "causal_mask", "feature_map_grad"])
    if choice == "scale":
        return [b.op(f"attn.scale {x.name} by {fmt(rng.choice([-3.0, 0.0, 0.5, 7.25]))}",
                     [x], x.shape, signed=True, fixed_type=True)]
    if choice == "feature_map":
        fm = rng.choice(FEATURE_MAPS)
        b.smooth = fm != "relu"
        return [b.op(f"attn.feature_map {fm} {x.name}", [x], x.shape, fixed_type=True)]
    if choice == "floor":
        b.smooth = False
        scaled = b.op(f"attn.scale {x.name} by 4.5", [x], x.shape, signed=True,
                      fixed_type=True)
        return [b.op(f"attn.floor {scaled.name}", [scaled], x.shape, signed=True,
                     fixed_type=True)]
    if choice == "feature_map_grad":
        b.differentiable = False  # an adjoint op: no rule of its own
        ct = b.arg(list(x.shape))  # the op's operands share one type
        fm = rng.choice(FEATURE_MAPS)
        return [b.op(f"attn.feature_map_grad {fm} {x.name}, {ct.name}", [x, ct], x.shape,
                     signed=True, fixed_type=True)]
    # A causal mask: fill 0, a finite value, or -inf before a softmax over
    # keys (an infinite result would compare as NaN).
    fill = rng.choice(["0.0", "-2.5", None])
    if fill is None:
        masked = b.op(f"attn.causal_mask {x.name}", [x], x.shape, signed=True,
                      fixed_type=True)
        return [b.op(f"attn.normalize softmax {masked.name} dim {len(shape) - 1}",
                     [masked], x.shape, fixed_type=True)]
    return [b.op(f"attn.causal_mask {x.name} fill {fill}", [x], x.shape, signed=True,
                 fixed_type=True)]


def binary(b):
    """add, mul, div with numpy broadcasting either way."""
    rng = b.rng
    shape = plain_shape(b)
    other = [Dim(1) if rng.random() < 0.4 else b.same(d) for d in shape]
    other = other[rng.randrange(len(other)):] if rng.random() < 0.3 else other
    lhs, rhs = (shape, other) if rng.random() < 0.6 else (other, shape)
    x, y = b.arg(lhs), b.arg(rhs)
    out = broadcast(x.shape, y.shape)
    b.macs += numel(out)
    op = rng.choice(["add", "mul", "div"])
    eps = f" eps {fmt(rng.choice([1e-3, 0.5]))}" if op == "div" else ""
    return [b.final(f"attn.{op} {x.name}, {y.name}{eps}", [x, y], out)]


def broadcast_ops(b):
    """attn.broadcast and its adjoint attn.unbroadcast."""
    rng = b.rng
    big = plain_shape(b)
    small = [Dim(1) if rng.random() < 0.5 else b.same(d) for d in big]
    small = small[rng.randrange(len(small)):] if rng.random() < 0.3 else small
    if not small:
        small = [Dim(1)]
    b.macs += numel(big)
    b.differentiable = False  # adjoint ops: no rules of their own (docs/training.md)
    if rng.random() < 0.5:
        x, like = b.arg(small), b.arg(big, no_grad=True)
        return [b.final(f"attn.broadcast {x.name} like {like.name}", [x, like], like.shape)]
    x, like = b.arg(big), b.arg(small, no_grad=True)
    return [b.final(f"attn.unbroadcast {x.name} like {like.name}", [x, like], like.shape)]


def attention_grad(b):
    rng = b.rng
    q, k, v, mask, out = attention_operands(b, rng.random() < 0.3)
    do = b.arg(b.shape_like(out))
    lead = out[:-2]
    shapes = [lead + q.shape[-2:], lead + k.shape[-2:], lead + v.shape[-2:]]
    text = f"attn.attention_grad {q.name}, {k.name}, {v.name}, {do.name}"
    operands = [q, k, v, do]
    if mask:
        text += f" mask {mask.name}"
        operands.append(mask)
    if rng.random() < 0.6:
        text += " scale " + fmt(rng.choice([0.125, -0.5, 1.0]))
    if rng.random() < 0.4:
        text += " causal"
    b.macs *= 3
    b.differentiable = False
    return b.ops3(text, operands, shapes)


def deformable_grad(b):
    v, loc, w, merged, attrs, positions = deformable_operands(b)
    ct = b.arg([b.same(w.shape[0]), b.same(w.shape[1]), merged])
    b.macs += numel(w.shape) * v.shape[3].size * 24
    b.differentiable = False
    batch = unify(unify(v.shape[0], loc.shape[0]), w.shape[0])
    sample_dims = [batch] + [unify(l, x) for l, x in zip(loc.shape[1:5], w.shape[1:5])]
    shapes = [[batch, Dim(positions.size), unify(v.shape[2], sample_dims[2]), v.shape[3]],
              sample_dims + [Dim(2)], list(sample_dims)]
    return b.ops3(f"attn.deformable_grad {v.name}, {loc.name}, {w.name}, {ct.name} {attrs}",
                  [v, loc, w, ct], shapes)


def epilogue(b, value):
    """An elementwise op after the family's result (fused by codegen)."""
    rng = b.rng
    last = len(value.shape) - 1
    choice = rng.choice(["scale", "feature_map", "add", "mul", "softmax"])
    if choice == "scale":
        return b.op(f"attn.scale {value.name} by 0.75", [value], value.shape, value.signed,
                    fixed_type=True)
    if choice == "feature_map":
        fm = rng.choice(["identity", "elu_plus_one"])
        return b.op(f"attn.feature_map {fm} {value.name}", [value], value.shape,
                    fixed_type=True)
    if choice == "softmax":
        return b.op(f"attn.normalize softmax {value.name} dim {last}", [value],
                    value.shape, fixed_type=True)
    row = [Dim(1)] * last + [b.same(value.shape[-1])]
    other = b.arg(row if rng.random() < 0.5 else b.shape_like(value.shape), dtype=value.dtype)
    return b.final(f"attn.{choice} {value.name}, {other.name}", [value, other],
                broadcast(value.shape, other.shape), value.signed)


FAMILIES = {
    "dot_product": (dot_product, 8),
    "efficient": (efficient, 2),
    "external": (external, 2),
    "deformable": (deformable, 2),
    "bilinear_gather": (bilinear_gather, 1),
    "gather_pixels": (gather_pixels, 1),
    "scatter_pixels": (scatter_pixels, 1),
    "matmul": (matmul, 2),
    "normalize": (normalize, 1),
    "prefix_sum": (prefix_sum, 1),
    "reduce_sum": (reduce_sum, 1),
    "elementwise": (elementwise_unary, 2),
    "binary": (binary, 1),
    "broadcast": (broadcast_ops, 1),
    "attention_grad": (attention_grad, 1),
    "deformable_grad": (deformable_grad, 1),
}
# Pixel coordinates must be f32 or f64 (AttnOps.cpp), and they share the
# value's element type.
FULL_PRECISION_ONLY = {"gather_pixels", "scatter_pixels"}


def generate(rng, probes, family=None):
    """A random valid spec within MAX_MACS. `probes` maps an axis
    (queries, keys, features, channels) to sizes around codegen's
    thresholds."""
    names = list(FAMILIES)
    weights = [FAMILIES[n][1] for n in names]
    for _ in range(100):
        name = family or rng.choices(names, weights)[0]
        dtype = rng.choices(["f32", "f64", "bf16", "f16"], [10, 2, 2, 1])[0]
        if name in FULL_PRECISION_ONLY and dtype not in ("f32", "f64"):
            dtype = "f32"
        dynamic = rng.choice(DYNAMIC_SIZES) if rng.random() < 0.3 else None
        b = Builder(rng, dtype, dynamic, probes)
        results = FAMILIES[name][0](b)
        if rng.random() < 0.3 and len(results) == 1 and results[0].shape:
            extra = epilogue(b, results[0])
            results = [extra] if rng.random() < 0.7 else [results[0], extra]
        if b.macs > MAX_MACS:
            continue
        if not any(d.dynamic for v, _ in b.args for d in v.shape):
            dynamic = None
        inputs = sum(numel(v.shape) for v, _ in b.args)
        return Spec(b.text(results), name, dynamic, b.differentiable, b.macs, inputs,
                    b.smooth)
    raise RuntimeError("no spec within the cost bound")
