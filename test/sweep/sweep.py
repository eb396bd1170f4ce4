#!/usr/bin/env python3
"""The shape sweep: every op family at sizes on both sides of every size
where code generation changes form, JIT (and a subset AOT) against the
reference runtime.

The sizes come from code generation itself (`attn-compile
--print-thresholds`, codegen/ShapeThresholds.cpp), once per target vector
width (AVX-512 and AVX2), so a schedule that gains a threshold is swept
without editing this file. Each case is one generated spec, run with
`attn-run --check` (the documented tolerance, 1e-4 relative); the exact
rewrites (attn-reassociate forced, the lowering passes) run on their own
pipelines too. docs/testing.md says what the slices cover.

    sweep.py --bin build/bin --slice quick      # inside scripts/test.sh
    sweep.py --bin build/bin --slice full       # ctest -C sweep -L sweep
    sweep.py --bin build/bin --list             # the cases, not run
    sweep.py --bin build/bin --filter efficient --keep /tmp/sweep
"""

import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

# The AVX2 target of the narrow sweep; "host" is the wide one (AVX-512 on
# every development host). A host without AVX-512 sweeps one width only.
NARROW_TARGET = "x86-64-linux-avx-avx2-f16c-fma-sse41"
# Reference cost per case, in multiply-adds of its naive loops (the
# reference runs at ~1 GMAC/s in f64, so about a second at most).
MAX_REFERENCE_MACS = 4.0e8
# Sizes of the dims that are not being probed, besides small probes.
PARTNER_SIZES = [1, 2, 3, 5, 8, 12, 16, 17, 24, 32, 33, 48, 64, 65, 96]
COMMAND_TIMEOUT_S = 600
CHECK_LINE = re.compile(r"check: @\S+ max abs err = (\S+), max rel err = (\S+)")
# The exact rewrites wherever they apply, whatever the cost (the default
# pipeline takes them only where they are cheaper).
EXACT_REWRITES = "canonicalize,attn-reassociate{force=true},canonicalize,cse"


def tensor(shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + "x" + dtype + ">"


class Case:
    """One generated spec and the pipelines it runs on."""

    def __init__(self, family, dims, spec, macs, probe):
        self.family = family
        self.dims = dims
        self.spec = spec
        self.macs = macs
        self.probe = probe  # (dim name, size, threshold name)
        self.target = "host"
        self.pipelines = [None]  # None: the default pipeline
        self.aot = False
        self.corner = False  # every dim 1 (corner_cases)
        self.dynamic_size = None
        self.lead = []
        self.grad = family.endswith("_grad")
        # The gradient that takes the forward's saved statistics (the
        # one-pass softmax backward where the sizes allow it; efficient
        # attention's context).
        self.saved_statistics = family.endswith("_saved_grad")
        # bf16 weights (attn.allow_bf16_products): inputs in [0.5, 1), where
        # attn-run's default tolerance for the opt-in is a bound
        # (docs/precision.md, "Opt-in: bf16 products").
        self.random_range = ("--random-range=0.5,1"
                             if "_bf16_weights" in family else None)
        # The opt-in's paired products (vdpbf16ps on AVX512-BF16) on any
        # host: precision.bf16Pairs=2 takes them without AVX512-BF16 too.
        # The plain bf16 families pin the unpaired form (f32 FMAs on widened
        # values; the default where vdpbf16ps does not pay) on every host.
        self.schedule_params = (
            ["--schedule-param", "precision.bf16Pairs=2"]
            if "_bf16_weights" in family else
            ["--schedule-param", "precision.bf16Pairs=0"]
            if family.endswith("_bf16") else [])

    @property
    def name(self):
        parts = [self.family] + [f"{k}{v}" for k, v in self.dims.items()]
        if self.target != "host":
            parts.append("avx2")
        return "_".join(str(p) for p in parts).replace("-", "_")


# --------------------------------------------------------------------------
# Families: each takes a dict of dims and returns (spec text, reference MACs).
# Leading dims "lead" (a list) are batch/head dims; rank = len(lead) + 2.
# --------------------------------------------------------------------------


def dot_product(norm, extra="", feature_map="", dtype="f32", out_dtype=None):
    """`out_dtype`: the result's element type where it differs from the
    operands' (mixed precision: bf16 in, f32 out, or f32 in, bf16 out)."""
    def build(d):
        lead, n, m, dk, dv = d["lead"], d["n"], d["m"], d["dk"], d["dv"]
        q, k, v, o = (tensor(lead + [n, dk], dtype),
                      tensor(lead + [d["mdyn"], dk], dtype),
                      tensor(lead + [d["mdyn"], dv], dtype),
                      tensor(lead + [n, dv], out_dtype or dtype))
        attrs = f"norm [{norm}]{extra}{feature_map}"
        spec = (f"func.func @f(%q: {q}, %k: {k}, %v: {v}) -> {o} {{\n"
                f"  %o = attn.dot_product %q, %k, %v {attrs}\n"
                f"      : {q}, {k}, {v} -> {o}\n"
                f"  return %o : {o}\n}}\n")
        return spec, prod(lead) * n * m * (dk + dv)
    return build


def masked_softmax(d):
    # An additive mask broadcast over the batch dims (window attention's
    # bias): (1, n, m) against (lead..., n, dk).
    lead, n, m, dk, dv = d["lead"], d["n"], d["m"], d["dk"], d["dv"]
    q, k, v, o = (tensor(lead + [n, dk]), tensor(lead + [m, dk]),
                  tensor(lead + [m, dv]), tensor(lead + [n, dv]))
    mask = tensor([1] * min(len(lead), 1) + [n, m])
    spec = (f"func.func @f(%q: {q}, %k: {k}, %v: {v}, %mask: {mask}) -> {o} {{\n"
            f"  %o = attn.dot_product %q, %k, %v mask %mask norm [softmax over keys]"
            f" scale 0.2\n      : {q}, {k}, {v}, {mask} -> {o}\n"
            f"  return %o : {o}\n}}\n")
    return spec, prod(lead) * n * m * (dk + dv)


def efficient(variant, extra="", dtype="f32", out_dtype=None):
    def build(d):
        lead, n, m, dk, dv = d["lead"], d["n"], d["m"], d["dk"], d["dv"]
        q, k, v, o = (tensor(lead + [n, dk], dtype),
                      tensor(lead + [d["mdyn"], dk], dtype),
                      tensor(lead + [d["mdyn"], dv], dtype),
                      tensor(lead + [n, dv], out_dtype or dtype))
        spec = (f"func.func @f(%q: {q}, %k: {k}, %v: {v}) -> {o} {{\n"
                f"  %o = attn.efficient %q, %k, %v variant {variant}{extra}\n"
                f"      : {q}, {k}, {v} -> {o}\n"
                f"  return %o : {o}\n}}\n")
        return spec, prod(lead) * (n + m) * dk * dv
    return build


def external_typed(dtype="f32", out_dtype=None):
    def build(d):
        lead, n, m, dk, dv = d["lead"], d["n"], d["m"], d["dk"], d["dv"]
        x, mk, mv, o = (tensor(lead + [n, dk], dtype), tensor([m, dk], dtype),
                        tensor([m, dv], dtype),
                        tensor(lead + [n, dv], out_dtype or dtype))
        spec = (f"func.func @f(%x: {x}, %mk: {mk}, %mv: {mv}) -> {o} {{\n"
                f"  %o = attn.external %x, %mk, %mv : {x}, {mk}, {mv} -> {o}\n"
                f"  return %o : {o}\n}}\n")
        return spec, prod(lead) * n * m * (dk + dv)
    return build


external = external_typed()


LEVEL_SETS = [[(4, 4)], [(8, 8), (4, 4)], [(7, 5), (3, 2), (1, 1)],
              [(16, 16), (8, 8), (4, 4), (2, 2)]]


def level_list(d):
    """The levels of a sampling case: LEVEL_SETS[d["levels"]], or when the
    levels axis is probed (d["nl"]) that many small levels."""
    if "nl" in d:
        return [(2 + i % 3, 1 + i % 2) for i in range(d["nl"])]
    return LEVEL_SETS[d["levels"]]


def sampling(op, align):
    """attn.deformable or attn.bilinear_gather: queries n, channels D,
    heads M, points P over one of LEVEL_SETS."""
    def build(d):
        batch, lq, heads, ch, points = (d["batch"], d["n"], d["heads"],
                                        d["ch"], d["points"])
        levels = level_list(d)
        positions = sum(h * w for h, w in levels)
        nl = len(levels)
        value = tensor([batch, positions, heads, ch])
        loc = tensor([batch, lq, heads, nl, points, 2])
        level_text = ", ".join(f"{h}x{w}" for h, w in levels)
        ac = " align_corners" if align else ""
        if op == "deformable":
            w = tensor([batch, lq, heads, nl, points])
            o = tensor([batch, lq, heads * ch])
            spec = (f"func.func @f(%value: {value}, %loc: {loc}, %w: {w}) -> {o} {{\n"
                    f"  %o = attn.deformable %value, %loc, %w levels [{level_text}]{ac}\n"
                    f"      : {value}, {loc}, {w} -> {o}\n"
                    f"  return %o : {o}\n}}\n")
        else:
            o = tensor([batch, lq, heads, nl, points, ch])
            spec = (f"func.func @f(%value: {value}, %loc: {loc}) -> {o} {{\n"
                    f"  %o = attn.bilinear_gather %value, %loc levels [{level_text}]{ac}\n"
                    f"      : {value}, {loc} -> {o}\n"
                    f"  return %o : {o}\n}}\n")
        return spec, batch * lq * heads * nl * points * ch * 4
    return build


def matmul(transpose_lhs, transpose_rhs):
    def build(d):
        lead, rows, depth, cols = d["lead"], d["n"], d["m"], d["dv"]
        a = tensor(lead + ([depth, rows] if transpose_lhs else [rows, depth]))
        b = tensor(lead + ([cols, depth] if transpose_rhs else [depth, cols]))
        o = tensor(lead + [rows, cols])
        flags = (" transpose_lhs" if transpose_lhs else "") + (
            " transpose_rhs" if transpose_rhs else "")
        spec = (f"func.func @f(%a: {a}, %b: {b}) -> {o} {{\n"
                f"  %o = attn.matmul %a, %b{flags} : {a}, {b} -> {o}\n"
                f"  return %o : {o}\n}}\n")
        return spec, prod(lead) * rows * depth * cols
    return build


def unary(op_text, axis_last):
    """An op on one tensor (lead..., m, dv) that keeps its shape; the
    normalized or scanned dim is m (axis_last: dv)."""
    def build(d):
        lead, m, dv = d["lead"], d["m"], d["dv"]
        x = tensor(lead + [m, dv])
        dim = len(lead) + (1 if axis_last else 0)
        spec = (f"func.func @f(%x: {x}) -> {x} {{\n"
                f"  %o = {op_text.format(dim=dim)} : {x}\n"
                f"  return %o : {x}\n}}\n")
        return spec, prod(lead) * m * dv * 4
    return build


def reduce_sum(axis_last):
    def build(d):
        lead, m, dv = d["lead"], d["m"], d["dv"]
        x = tensor(lead + [m, dv])
        o = tensor(lead + ([m, 1] if axis_last else [1, dv]))
        dim = len(lead) + (1 if axis_last else 0)
        spec = (f"func.func @f(%x: {x}) -> {o} {{\n"
                f"  %o = attn.reduce_sum %x dim {dim} : {x} -> {o}\n"
                f"  return %o : {o}\n}}\n")
        return spec, prod(lead) * m * dv
    return build


def binary(op_name, extra=""):
    """attn.add/mul/div of (lead..., n, dv) and a broadcast (1, dv) row."""
    def build(d):
        lead, n, dv = d["lead"], d["n"], d["dv"]
        x, r = tensor(lead + [n, dv]), tensor([1, dv])
        spec = (f"func.func @f(%x: {x}, %r: {r}) -> {x} {{\n"
                f"  %o = attn.{op_name} %x, %r{extra} : {x}, {r} -> {x}\n"
                f"  return %o : {x}\n}}\n")
        return spec, prod(lead) * n * dv
    return build


def causal_mask(d):
    lead, n, m = d["lead"], d["n"], d["m"]
    x = tensor(lead + [n, m])
    spec = (f"func.func @f(%x: {x}) -> {x} {{\n"
            f"  %o = attn.causal_mask %x fill 0.0 : {x}\n"
            f"  return %o : {x}\n}}\n")
    return spec, prod(lead) * n * m


# Gradient cases draw zero-mean inputs and cotangents (--random-range):
# with [0, 1) values, softmax(K)^T V averages V to rows that differ by
# ~1/sqrt(m) around 0.5, and efficient attention's dQ = s (dS - rowsum(dS s))
# cancels that common part. In f32 it loses 2.5e-4 relative at m = 3072
# (PyTorch's f32 autograd 1.4e-3) against the f64 reference: the format's
# limit on an ill-conditioned case, not the kernel's.
GRADIENT_RANGE = "--random-range=-1,1"


def gradient(build):
    """The same spec, run as its gradient @f_grad (attn-run --grad): its
    reference evaluates forward and backward, about 4x the forward's
    multiply-adds."""
    def grad_build(d):
        spec, macs = build(d)
        return spec, 4 * macs
    return grad_build


def prod(values):
    result = 1
    for v in values:
        result *= v
    return result


# Which dims each family has, by axis of codegen's thresholds, and which
# extra pipelines its exact rewrites run on.
ATTENTION_DIMS = {"n": "queries", "m": "keys", "dk": "features", "dv": "features"}
DEFORMABLE_DIMS = {"n": "queries", "ch": "channels", "points": "points",
                   "nl": "levels"}
FAMILIES = {
    "softmax": (dot_product("softmax over keys", " scale 0.125"), ATTENTION_DIMS, []),
    "softmax_causal": (dot_product("softmax over keys", " scale 0.125 causal"),
                       ATTENTION_DIMS, []),
    "softmax_mask": (masked_softmax, ATTENTION_DIMS, []),
    "count": (dot_product("count over keys"), ATTENTION_DIMS, [EXACT_REWRITES]),
    "count_causal": (dot_product("count over keys", " causal"), ATTENTION_DIMS,
                     [EXACT_REWRITES]),
    "linear": (dot_product("sum over keys", feature_map=" feature_map elu_plus_one"),
               ATTENTION_DIMS, [EXACT_REWRITES]),
    "linear_causal": (dot_product("sum over keys", "",
                                  " feature_map elu_plus_one causal"),
                      ATTENTION_DIMS, [EXACT_REWRITES]),
    "double_norm": (dot_product("softmax over queries, sum over keys eps 1.0e-9"),
                    ATTENTION_DIMS, ["attn-lower-double-norm"]),
    "efficient_softmax": (efficient("softmax"), ATTENTION_DIMS, []),
    "efficient_scaling": (efficient("scaling"), ATTENTION_DIMS, []),
    "external": (external, ATTENTION_DIMS, ["attn-lower-double-norm"]),
    "deformable": (sampling("deformable", False), DEFORMABLE_DIMS,
                   ["attn-lower-deformable"]),
    "deformable_ac": (sampling("deformable", True), DEFORMABLE_DIMS,
                      ["attn-lower-deformable"]),
    "bilinear_gather": (sampling("bilinear_gather", False),
                        {"n": "queries", "ch": "channels"}, []),
    # Gradients (docs/training.md): the fused softmax backward, the linear
    # forms' chains of products over positions and row-local products.
    # bf16 Q, K, V on f32 FMAs: Q and V widened once into f32 copies.
    "softmax_bf16": (dot_product("softmax over keys", " scale 0.125",
                                 dtype="bf16"), ATTENTION_DIMS, []),
    "softmax_causal_bf16": (dot_product(
        "softmax over keys", " scale 0.125 causal", dtype="bf16"),
        ATTENTION_DIMS, []),
    # bf16 Q, K, V with the opt-in to bf16 weights: weights x V in key
    # pairs (vdpbf16ps) where m is even and the scores pair up.
    "softmax_bf16_weights": (dot_product(
        "softmax over keys", " scale 0.125 {attn.allow_bf16_products}",
        dtype="bf16"), ATTENTION_DIMS, []),
    "softmax_causal_bf16_weights": (dot_product(
        "softmax over keys", " scale 0.125 causal {attn.allow_bf16_products}",
        dtype="bf16"), ATTENTION_DIMS, []),
    # Efficient attention with the opt-in: K^T V and Q context in pairs
    # where dk is even and the positions run in chunks.
    "efficient_bf16_weights": (efficient(
        "softmax", " {attn.allow_bf16_products}", dtype="bf16"),
        ATTENTION_DIMS, []),
    # Linear attention with the opt-in: the reassociated products round
    # phi(K), phi(Q) and the context and reduce in pairs where their
    # contraction dim is even.
    "linear_bf16_weights": (dot_product(
        "sum over keys",
        feature_map=" feature_map elu_plus_one {attn.allow_bf16_products}",
        dtype="bf16"), ATTENTION_DIMS, []),
    "linear_causal_bf16_weights": (dot_product(
        "sum over keys",
        feature_map=(" feature_map elu_plus_one causal"
                     " {attn.allow_bf16_products}"),
        dtype="bf16"), ATTENTION_DIMS, []),
    "softmax_grad": (gradient(dot_product("softmax over keys", " scale 0.125")),
                     ATTENTION_DIMS, []),
    "softmax_causal_grad": (gradient(dot_product("softmax over keys",
                                                 " scale 0.125 causal")),
                            ATTENTION_DIMS, []),
    "softmax_saved_grad": (gradient(dot_product("softmax over keys",
                                                " scale 0.125")),
                           ATTENTION_DIMS, []),
    "softmax_causal_saved_grad": (gradient(dot_product("softmax over keys",
                                                       " scale 0.125 causal")),
                                  ATTENTION_DIMS, []),
    "linear_grad": (gradient(dot_product("sum over keys",
                                         feature_map=" feature_map elu_plus_one")),
                    ATTENTION_DIMS, []),
    # The saved context and key sums (--grad-save-statistics) where the
    # forward is the linear form; nothing saved at the sizes where it is
    # not (few positions, dynamic sizes).
    "linear_saved_grad": (gradient(dot_product(
        "sum over keys", feature_map=" feature_map elu_plus_one")),
        ATTENTION_DIMS, []),
    "efficient_softmax_grad": (gradient(efficient("softmax")), ATTENTION_DIMS, []),
    # bf16 Q, K, V: the gradient rounds dQ, dK and dV, and shares row tasks
    # where the fused groups stay acyclic (closesGroupCycle).
    "efficient_softmax_bf16_grad": (gradient(efficient("softmax", dtype="bf16")),
                                    ATTENTION_DIMS, []),
    # The saved context (--grad-save-statistics): four products, the trace
    # form for static shapes, the sum over positions for a dynamic m.
    "efficient_softmax_saved_grad": (gradient(efficient("softmax")),
                                     ATTENTION_DIMS, []),
    "external_grad": (gradient(external), ATTENTION_DIMS, []),
    # The saved weights (--grad-save-statistics): the forward in primitive
    # form returns the softmax over positions; four products.
    "external_saved_grad": (gradient(external), ATTENTION_DIMS, []),
    # Mixed precision with saved statistics: bf16 operands and an f32
    # result, or f32 operands and a bf16 result; the forward computes the op
    # in f32 and saves what an f32 op saves, in f32 (softmax attention's
    # output unrounded).
    "softmax_mixed_saved_grad": (gradient(dot_product(
        "softmax over keys", " scale 0.125", dtype="bf16", out_dtype="f32")),
        ATTENTION_DIMS, []),
    "softmax_rounded_saved_grad": (gradient(dot_product(
        "softmax over keys", " scale 0.125", out_dtype="bf16")),
        ATTENTION_DIMS, []),
    "linear_mixed_saved_grad": (gradient(dot_product(
        "sum over keys", feature_map=" feature_map elu_plus_one",
        dtype="bf16", out_dtype="f32")), ATTENTION_DIMS, []),
    "linear_rounded_saved_grad": (gradient(dot_product(
        "sum over keys", feature_map=" feature_map elu_plus_one",
        out_dtype="bf16")), ATTENTION_DIMS, []),
    "efficient_softmax_mixed_saved_grad": (gradient(efficient(
        "softmax", dtype="bf16", out_dtype="f32")), ATTENTION_DIMS, []),
    # bf16 throughout: the same, the result rounded once.
    "softmax_bf16_saved_grad": (gradient(dot_product(
        "softmax over keys", " scale 0.125", dtype="bf16")),
        ATTENTION_DIMS, []),
    "efficient_softmax_bf16_saved_grad": (gradient(efficient(
        "softmax", dtype="bf16")), ATTENTION_DIMS, []),
    "linear_bf16_saved_grad": (gradient(dot_product(
        "sum over keys", feature_map=" feature_map elu_plus_one",
        dtype="bf16")), ATTENTION_DIMS, []),
    "external_mixed_saved_grad": (gradient(external_typed(
        dtype="bf16", out_dtype="f32")), ATTENTION_DIMS, []),
    "matmul": (matmul(False, False), {"n": "queries", "m": "keys", "dv": "features"}, []),
    "matmul_tl": (matmul(True, False), {"n": "queries", "m": "keys", "dv": "features"}, []),
    "matmul_tr": (matmul(False, True), {"n": "queries", "m": "keys", "dv": "features"}, []),
    "normalize_softmax_positions": (unary("attn.normalize softmax %x dim {dim}", False),
                                    {"m": "keys", "dv": "features"}, []),
    "normalize_sum_rows": (unary("attn.normalize sum %x dim {dim} eps 1.0e-3", True),
                           {"m": "queries", "dv": "keys"}, []),
    "normalize_softmax_rows": (unary("attn.normalize softmax %x dim {dim}", True),
                               {"m": "queries", "dv": "keys"}, []),
    "normalize_count_positions": (unary("attn.normalize count %x dim {dim}", False),
                                  {"m": "keys", "dv": "features"}, []),
    "prefix_sum": (unary("attn.prefix_sum %x dim {dim}", False),
                   {"m": "keys", "dv": "features"}, []),
    "prefix_sum_exclusive_last": (unary("attn.prefix_sum %x dim {dim} exclusive", True),
                                  {"m": "queries", "dv": "keys"}, []),
    "reduce_sum_positions": (reduce_sum(False), {"m": "keys", "dv": "features"}, []),
    "reduce_sum_rows": (reduce_sum(True), {"m": "queries", "dv": "keys"}, []),
    "scale": (unary("attn.scale %x by 0.5", False), {"m": "queries", "dv": "features"}, []),
    "feature_map": (unary("attn.feature_map elu_plus_one %x", False),
                    {"m": "queries", "dv": "features"}, []),
    "add_bcast": (binary("add"), {"n": "queries", "dv": "features"}, []),
    "div_bcast": (binary("div", " eps 1.0e-3"), {"n": "queries", "dv": "features"}, []),
    "causal_mask": (causal_mask, {"n": "queries", "m": "keys"}, []),
}
# Families whose keys may be dynamic (a KV cache: `?` keys, sized at run time).
DYNAMIC_KEYS = {"softmax", "softmax_causal", "count", "linear", "efficient_softmax",
                "efficient_scaling"}
SAMPLING = {"deformable", "deformable_ac", "bilinear_gather"}


def probe_sizes(thresholds, axis, cap):
    """Sizes on both sides of each threshold on `axis`: t - 1, t, t + 1, and
    t + period where the form needs a multiple. Each with its source and
    the positions the form needs too (keys_at_least, 0 for none)."""
    sizes = {1: ("1", 0), 2: ("2", 0), 3: ("3", 0)}
    for t in thresholds:
        if axis not in t["axes"]:
            continue
        candidates = [t["size"] - 1, t["size"], t["size"] + 1]
        if t["period"]:
            candidates.append(t["size"] + t["period"])
        for s in candidates:
            if 1 <= s <= cap and s not in sizes:
                sizes[s] = (t["name"], t.get("keys_at_least", 0))
    return sizes


def axis_cap(family, dim):
    """The largest size a dim of `family` is swept at: features stop at a
    few vectors past the register-accumulator limit; elementwise rows go
    past one task; positions go past every chunk and split threshold."""
    if family in SAMPLING:
        return {"n": 300, "ch": 140, "points": 40, "nl": 12}[dim]
    if dim in ("dk", "dv"):
        elementwise = family in ("scale", "feature_map", "add_bcast", "div_bcast")
        return 9000 if elementwise else 300
    return 4200


def make_dims(family, dims_spec, probe_dim, probe, rng, keys_at_least=0):
    """One case: `probe_dim` at `probe`, the other dims from PARTNER_SIZES
    (n != m and dk != dv where possible), leading dims of size 1 and > 1
    for ranks 2 to 5; shrunk until the reference cost is bounded. When the
    probed form needs `keys_at_least` positions, the family's keys dim (if
    it is not the probe) gets them and is not shrunk."""
    build = FAMILIES[family][0]
    if family in SAMPLING:
        dims = {"batch": rng.choice([1, 2]), "n": rng.choice([1, 7, 16, 33]),
                "heads": rng.choice([1, 2, 3]), "ch": rng.choice([4, 8, 13, 32]),
                "points": rng.choice([1, 2, 4]),
                "levels": rng.randrange(len(LEVEL_SETS))}
        dims[probe_dim] = probe
        return dims
    lead_count = rng.randrange(4)
    lead = [rng.choice([1, 2, 3]) for _ in range(lead_count)]
    dims = {"lead": lead}
    for dim in ("n", "m", "dk", "dv"):
        dims[dim] = rng.choice(PARTNER_SIZES)
    dims[probe_dim] = probe
    held = {probe_dim}
    if keys_at_least and probe_dim != "m" and dims_spec.get("m") == "keys":
        dims["m"] = max(dims["m"], keys_at_least)
        held.add("m")
    if dims["n"] == dims["m"] and probe_dim != "n" and dims_spec.get("n"):
        dims["n"] += 1
    if dims["dk"] == dims["dv"] and probe_dim != "dk":
        dims["dk"] += 1
    dims["mdyn"] = dims["m"]
    # Shrink what is not probed until the reference is cheap enough.
    for _ in range(64):
        _, macs = build(dims)
        if macs <= MAX_REFERENCE_MACS:
            break
        if any(x > 1 for x in dims["lead"]):
            dims["lead"] = [1 for _ in dims["lead"]]
            continue
        partners = [k for k in ("dk", "dv", "n", "m") if k not in held
                    and dims[k] > 2]
        if not partners:
            break
        largest = max(partners, key=lambda k: dims[k])
        dims[largest] = max(2, dims[largest] // 2)
        dims["mdyn"] = dims["m"]
    if family.startswith("softmax") and family.endswith("_saved_grad"):
        # The one-pass backward needs whole blocks of queries and keys and
        # two batch indices: the positions not probed are 64 or 128, and
        # the batch at least 2, so each probe runs the one pass on the
        # block side of its threshold and the two passes on the other.
        for dim in ("n", "m"):
            if dim != probe_dim:
                dims[dim] = 64 if dims[dim] <= 96 else 128
        if prod(dims["lead"]) < 2:
            dims["lead"] = [2] + dims["lead"][1:]
        dims["mdyn"] = dims["m"]
    return dims


def print_thresholds(bin_dir, target):
    out = subprocess.run([os.path.join(bin_dir, "attn-compile"), "--print-thresholds",
                          "--target", target], check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out)


def host_has_avx512():
    try:
        with open("/proc/cpuinfo") as f:
            return "avx512f" in f.read()
    except OSError:
        return False


def shown_dims(dims, dims_spec):
    """The dims a case's name shows: those its family uses."""
    shown = {k: v for k, v in dims.items()
             if k in dims_spec or k not in ATTENTION_DIMS}
    shown.pop("mdyn", None)
    if "lead" in shown:
        shown["lead"] = "x".join(map(str, dims["lead"])) or "r2"
    return shown


def generate(bin_dir, seed):
    """Every case of the full sweep, in a deterministic order."""
    wide = print_thresholds(bin_dir, "host")
    widths = [("host", wide)]
    if host_has_avx512():
        widths.append((NARROW_TARGET, print_thresholds(bin_dir, NARROW_TARGET)))
    wide_sizes = {(t["name"], t["size"]) for t in wide["thresholds"]}
    cases, seen = [], set()
    for target, doc in widths:
        # The narrow target sweeps only the thresholds its vector width moves.
        thresholds = doc["thresholds"]
        if target != "host":
            thresholds = [t for t in thresholds
                          if (t["name"], t["size"]) not in wide_sizes]
        for family, (build, dims_spec, pipelines) in FAMILIES.items():
            rng = random.Random(f"{seed}/{family}/{target}")
            for dim, axis in dims_spec.items():
                sizes = probe_sizes(thresholds, axis, axis_cap(family, dim))
                if target != "host":
                    sizes = {s: n for s, n in sizes.items() if s > 3}
                for size, (source, keys_at_least) in sorted(sizes.items()):
                    dims = make_dims(family, dims_spec, dim, size, rng,
                                     keys_at_least)
                    spec, macs = build(dims)
                    shown = shown_dims(dims, dims_spec)
                    case = Case(family, shown, spec, macs, (dim, size, source))
                    case.target = target
                    case.lead = dims.get("lead", [dims.get("batch", 1)])
                    case.pipelines = [None] + list(pipelines)
                    variants = [case]
                    if family in DYNAMIC_KEYS and dim == "m" and size % 3 != 1:
                        # The same with a dynamic keys dim (a KV cache),
                        # sized at run time.
                        dynamic = Case(family, dict(shown), build(
                            dict(dims, mdyn="?"))[0], macs, case.probe)
                        dynamic.target, dynamic.lead = case.target, case.lead
                        dynamic.pipelines = case.pipelines
                        dynamic.dynamic_size = dims["m"]
                        dynamic.dims["m"] = f"dyn{dims['m']}"
                        variants.append(dynamic)
                    for variant in variants:
                        if variant.name not in seen:
                            seen.add(variant.name)
                            cases.append(variant)
    # A subset also AOT (every fifth case of each family).
    per_family = {}
    for case in cases:
        index = per_family.get(case.family, 0)
        per_family[case.family] = index + 1
        case.aot = index % 5 == 2
    return cases + corner_cases()


def corner_cases():
    """Each family with every dim at 1, once alone and once in a batch of
    2: buffers of one element, vectors with one live lane, reductions of
    one term. The probes above move one dim at a time, so they never gave
    m = dk = 1 together, where a one-float buffer crashed the kernel
    (docs/reliability.md). Each runs JIT and AOT; the quick slice takes
    the one without a batch."""
    cases = []
    for family, (build, dims_spec, pipelines) in FAMILIES.items():
        for batch in (1, 2):
            if family in SAMPLING:
                # LEVEL_SETS[2] ends with a 1 x 1 level.
                dims = {"batch": batch, "n": 1, "heads": 1, "ch": 1,
                        "points": 1, "levels": 2}
            else:
                dims = {"lead": [batch] if batch > 1 else [], "n": 1, "m": 1,
                        "dk": 1, "dv": 1, "mdyn": 1}
            spec, macs = build(dims)
            case = Case(family, {"corner": "", **shown_dims(dims, dims_spec)},
                        spec, macs,
                        ("all", 1, "every dim 1"))
            case.lead = dims.get("lead", [dims.get("batch", 1)])
            case.pipelines = [None] + list(pipelines)
            case.aot = True
            case.corner = True
            cases.append(case)
    return cases


def quick_slice(cases, per_family):
    """A few cases per family, spread over its sizes; the largest probe of
    each family's keys (the chunked forms) and its corners (every dim 1)
    always among them (the corner without a batch)."""
    chosen = []
    by_family = {}
    for case in cases:
        by_family.setdefault(case.family, []).append(case)
    for family, members in by_family.items():
        probed = [c for c in members if not c.corner]
        stride = max(1, len(probed) // per_family)
        picked = probed[stride // 2::stride][:per_family]
        # Static keys and batch or head dims > 1 at the largest key probe:
        # the chunked forms with leading dims (issue 28).
        biggest = max(probed, key=lambda c: (
            c.probe[0] == "m", c.dynamic_size is None,
            any(x > 1 for x in c.lead), c.probe[1]))
        if biggest not in picked:
            picked.append(biggest)
        # The corners (every dim 1) guard the smallest shapes; the quick
        # slice takes the one without a batch (about 1 s each, JIT and AOT).
        picked += [c for c in members if c.corner and c.lead in ([], [1])]
        chosen.extend(picked)
    return chosen


def run_case(case, bin_dir, work_dir, seed):
    """Runs every pipeline of `case`; returns (ok, lines)."""
    path = os.path.join(work_dir, case.name + ".mlir")
    with open(path, "w") as f:
        f.write(f"// sweep case {case.name}: {case.probe[0]} = {case.probe[1]} "
                f"({case.probe[2]})\n" + case.spec)
    runs = []
    for pipeline in case.pipelines:
        args = [os.path.join(bin_dir, "attn-run"), path, "--random", str(seed),
                "--check", "--quiet"] + (["--grad", GRADIENT_RANGE]
                                         if case.grad else [])
        if case.saved_statistics:
            args.append("--grad-save-statistics")
        if case.random_range:
            args.append(case.random_range)
        args += case.schedule_params
        if case.target != "host":
            args += ["--target", case.target]
        if case.dynamic_size is not None:
            args += ["--dynamic-size", str(case.dynamic_size)]
        if pipeline:
            args += ["--pass-pipeline", pipeline]
        runs.append(args)
        if case.aot and pipeline is None:
            runs.append(args + ["--aot"])
    lines, ok = [], True
    for args in runs:
        start = time.time()
        try:
            proc = subprocess.run(args, capture_output=True, text=True,
                                  timeout=COMMAND_TIMEOUT_S)
            output = proc.stdout + proc.stderr
            match = CHECK_LINE.search(proc.stdout)
            good = proc.returncode == 0 and match is not None
            detail = (f"rel err {match.group(2)}" if match
                      else f"exit code {proc.returncode}")
        except subprocess.TimeoutExpired:
            good, detail, output = False, f"timed out after {COMMAND_TIMEOUT_S} s", ""
        mode = ("aot " if "--aot" in args else "jit ") + (
            "[" + args[args.index("--pass-pipeline") + 1] + "]"
            if "--pass-pipeline" in args else "[default]")
        lines.append(f"  {'ok  ' if good else 'FAIL'} {mode} {detail} "
                     f"({time.time() - start:.1f} s)")
        if not good:
            ok = False
            lines.append("    $ " + " ".join(args))
            lines.extend("    " + line for line in output.strip().splitlines()[-8:])
    return ok, lines


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="directory of attn-run, attn-compile")
    parser.add_argument("--slice", choices=["quick", "full"], default="quick")
    parser.add_argument("--per-family", type=int, default=3,
                        help="quick slice: cases per family (plus its largest)")
    parser.add_argument("--filter", help="only cases whose name matches this regex")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--list", action="store_true", help="print the cases, run none")
    parser.add_argument("--keep", help="write the specs here (default: a temp dir)")
    args = parser.parse_args()

    cases = generate(args.bin, args.seed)
    if args.slice == "quick":
        cases = quick_slice(cases, args.per_family)
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, c.name)]
    if args.list:
        for c in cases:
            extra = " aot" if c.aot else ""
            print(f"{c.name}: {c.probe[0]}={c.probe[1]} ({c.probe[2]}), "
                  f"{c.macs:.2e} MACs, {len(c.pipelines)} pipelines{extra}")
        print(f"{len(cases)} cases")
        return 0
    work_dir = args.keep or tempfile.mkdtemp(prefix="attn-sweep-")
    os.makedirs(work_dir, exist_ok=True)
    print(f"sweep: {args.slice} slice, {len(cases)} cases, {args.jobs} jobs, "
          f"specs in {work_dir}", flush=True)
    passed = failed = 0
    start = time.time()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, c, args.bin, work_dir, args.seed): c
                   for c in cases}
        for future in concurrent.futures.as_completed(futures):
            case = futures[future]
            ok, lines = future.result()
            passed += ok
            failed += not ok
            print(f"{'PASS' if ok else 'FAIL'}: {case.name} "
                  f"({case.probe[0]} = {case.probe[1]}: {case.probe[2]})", flush=True)
            if not ok or os.environ.get("ATTN_SWEEP_VERBOSE"):
                print("\n".join(lines), flush=True)
    print(f"sweep: {time.time() - start:.0f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not cases else 0


if __name__ == "__main__":
    sys.exit(main())
