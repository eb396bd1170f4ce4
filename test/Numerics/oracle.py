#!/usr/bin/env python3
"""Independent float64 numpy oracle for the attn dialect.

Written from docs/design (section 3) and the op descriptions in
dialect/AttnOps.td only -- deliberately NOT from runtime/ -- so that it checks
the reference runtime (and, through it, everything compared against it).

Usage:
  oracle.py [--rtol R] CASE INPUT_DIR RESULT.npy [RESULT2.npy ...]
  oracle.py --self-test      (checks the oracle on hand-computed values)

CASE names a function of a spec in Inputs/; INPUT_DIR holds <argname>.npy for
every argument of that function (as written by `attn-run --save-inputs`, or
by Inputs/gen_inputs.py); RESULT.npy is what attn-run produced. The check is
|result - oracle| <= rtol * max(1, |oracle|) elementwise (rtol 1e-4 by
default: the product promise for f32 outputs). Non-finite oracle values
(e.g. the -inf of causal_mask) must be matched exactly.
"""
import argparse
import os
import sys

import numpy as np

# ---------------------------------------------------------------------------
# Elementwise pieces
# ---------------------------------------------------------------------------


def feature_map(x, kind):
    x = np.asarray(x, np.float64)
    if kind == "identity":
        return x
    if kind == "elu_plus_one":
        # elu(x) + 1 = x + 1 for x > 0, exp(x) otherwise.
        return np.where(x > 0, x + 1.0, np.exp(np.minimum(x, 0.0)))
    if kind == "relu":
        return np.maximum(x, 0.0)
    raise ValueError("unknown feature map %r" % kind)


def _t(x):
    return np.swapaxes(x, -1, -2)


def matmul(a, b, transpose_lhs=False, transpose_rhs=False):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    if transpose_lhs:
        a = _t(a)
    if transpose_rhs:
        b = _t(b)
    return np.matmul(a, b)  # numpy broadcasting of leading dims


def normalize(x, kind, dim, eps=0.0):
    """attn.normalize on every slice along `dim`."""
    x = np.asarray(x, np.float64)
    if kind == "none":
        return x.copy()
    if kind == "count":
        return x / x.shape[dim]
    if kind == "sum":
        return x / (eps + x.sum(axis=dim, keepdims=True))
    if kind == "softmax":
        mx = x.max(axis=dim, keepdims=True)
        allinf = np.isneginf(mx)
        mx = np.where(allinf, 0.0, mx)
        with np.errstate(invalid="ignore"):
            e = np.exp(x - mx)
        den = e.sum(axis=dim, keepdims=True)
        return np.where(allinf, 0.0, e / np.where(allinf, 1.0, den))
    raise ValueError("unknown norm kind %r" % kind)


def prefix_sum(x, dim, exclusive=False, reverse=False):
    """Sum over j <= i (j < i when exclusive); with reverse over j >= i
    (j > i), the suffix sum."""
    x = np.asarray(x, np.float64)
    if reverse:
        inclusive = np.flip(np.cumsum(np.flip(x, dim), axis=dim), dim)
    else:
        inclusive = np.cumsum(x, axis=dim)
    return inclusive - x if exclusive else inclusive


def causal_mask(x, fill=-np.inf):
    x = np.asarray(x, np.float64)
    n, m = x.shape[-2:]
    i = np.arange(n)[:, None]
    j = np.arange(m)[None, :]
    return np.where(j > i, fill, x)


# ---------------------------------------------------------------------------
# Primitives of gradients (--attn-grad)
# ---------------------------------------------------------------------------


def feature_map_grad(x, dy, kind):
    """dy * phi'(x): 1 (identity); 1 if x > 0 else exp(x) (elu_plus_one);
    1 if x > 0 else 0 (relu, 0 at x = 0)."""
    x = np.asarray(x, np.float64)
    dy = np.asarray(dy, np.float64)
    assert x.shape == dy.shape
    if kind == "identity":
        d = np.ones_like(x)
    elif kind == "elu_plus_one":
        d = np.where(x > 0, 1.0, np.exp(np.minimum(x, 0.0)))
    elif kind == "relu":
        d = np.where(x > 0, 1.0, 0.0)
    else:
        raise ValueError("unknown feature map %r" % kind)
    return dy * d


def broadcast(x, shape):
    """numpy broadcasting of x to exactly `shape`."""
    return np.broadcast_to(np.asarray(x, np.float64), tuple(shape)).copy()


def unbroadcast(g, shape):
    """Sum g over the dims in which a tensor of `shape` broadcasts to g's
    shape: the leading dims `shape` lacks, and where `shape` has 1."""
    g = np.asarray(g, np.float64)
    shape = tuple(shape)
    lead = g.ndim - len(shape)
    assert lead >= 0
    g = g.sum(axis=tuple(range(lead))) if lead else g
    for d, size in enumerate(shape):
        if size == 1:
            g = g.sum(axis=d, keepdims=True)
        else:
            assert g.shape[d] == size
    return g


def scatter_pixels(dy, pixels, levels):
    """The adjoint of gather_pixels: out (N, sum H W, M, D), zero except
    out[n, start_l + y W_l + x, h] += dy[n, q, h, l, p] for every pixel
    (x, y) = floor(pixels[n, q, h, l, p]) inside level l (finite)."""
    dy = np.asarray(dy, np.float64)
    pixels = np.asarray(pixels, np.float64)
    N, Lq, M, L, P, D = dy.shape
    assert pixels.shape == (N, Lq, M, L, P, 2) and L == len(levels)
    starts = np.concatenate([[0], np.cumsum([h * w for h, w in levels])])
    out = np.zeros((N, int(starts[-1]), M, D))
    with np.errstate(invalid="ignore"):
        x = np.floor(pixels[..., 0])
        y = np.floor(pixels[..., 1])
    for lid, (H, W) in enumerate(levels):
        xl, yl = x[:, :, :, lid], y[:, :, :, lid]        # (N, Lq, M, P)
        ok = np.isfinite(xl) & np.isfinite(yl)
        ok &= (xl >= 0) & (xl < W) & (yl >= 0) & (yl < H)
        n, q, h, p = np.nonzero(ok)
        rows = starts[lid] + yl[ok].astype(np.int64) * W + \
            xl[ok].astype(np.int64)
        np.add.at(out, (n, rows, h), dy[n, q, h, lid, p])
    return out


def insert_slice(src, dest, offsets, strides):
    """dest with src written at offsets[d] + i * strides[d] along each dim."""
    out = np.asarray(dest, np.float64).copy()
    src = np.asarray(src, np.float64)
    index = tuple(slice(o, o + (n - 1) * s + 1, s)
                  for o, n, s in zip(offsets, src.shape, strides))
    assert out[index].shape == src.shape
    out[index] = src
    return out


def pad(x, low, high, value):
    """x with `low[d]` and `high[d]` entries of `value` around each dim."""
    return np.pad(np.asarray(x, np.float64), list(zip(low, high)),
                  constant_values=value)


# ---------------------------------------------------------------------------
# High-level ops
# ---------------------------------------------------------------------------

AXIS = {"keys": -1, "queries": -2}


def dot_product(q, k, v, norm, scale=1.0, fmap="identity", causal=False,
                mask=None):
    """O = rho(scale * phi(Q) phi(K)^T + mask) V.

    norm: list of (kind, axis[, eps]). Hidden (causal) entries take part in
    no step and are 0 afterwards; softmax over a fully hidden slice gives 0;
    count divides by the full axis length.
    """
    q = feature_map(q, fmap)
    k = feature_map(k, fmap)
    v = np.asarray(v, np.float64)
    s = scale * np.matmul(q, _t(k))
    if mask is not None:
        # A -inf mask entry hides its score whatever it is (NaN included).
        mask = np.asarray(mask, np.float64)
        s = np.where(np.isneginf(mask), -np.inf, s + mask)
    n, m = s.shape[-2:]
    if causal:
        vis = np.arange(m)[None, :] <= np.arange(n)[:, None]
    else:
        vis = np.ones((n, m), bool)
    vis = np.broadcast_to(vis, s.shape)
    s = np.where(vis, s, 0.0)
    for step in norm:
        kind, axis = step[0], step[1]
        eps = step[2] if len(step) > 2 else 0.0
        ax = AXIS[axis]
        if kind == "none":
            pass
        elif kind == "count":
            s = s / s.shape[ax]
        elif kind == "sum":
            s = s / (eps + np.where(vis, s, 0.0).sum(axis=ax, keepdims=True))
        elif kind == "softmax":
            sm = np.where(vis, s, -np.inf)
            mx = sm.max(axis=ax, keepdims=True)
            mx = np.where(np.isneginf(mx), 0.0, mx)
            e = np.where(vis, np.exp(np.where(vis, s, 0.0) - mx), 0.0)
            den = e.sum(axis=ax, keepdims=True)
            s = np.where(den > 0, e / np.where(den > 0, den, 1.0), 0.0)
        else:
            raise ValueError(kind)
        s = np.where(vis, s, 0.0)
    return np.matmul(s, v)


def log_sum_exp(x, dim):
    """Each slice's log-sum-exp along `dim` (kept as size 1), as
    attn.efficient's `with_context` saves it: +inf for an all -inf slice
    (its softmax weights are 0), NaN for one with a NaN or +inf."""
    x = np.asarray(x, np.float64)
    bad = np.any(np.isnan(x) | np.isposinf(x), axis=dim, keepdims=True)
    mx = x.max(axis=dim, keepdims=True)
    allinf = np.isneginf(mx)
    mx = np.where(allinf | bad, 0.0, mx)
    with np.errstate(invalid="ignore", divide="ignore"):
        total = np.exp(np.where(bad, 0.0, x) - mx).sum(axis=dim, keepdims=True)
        lse = mx + np.log(total)
    return np.where(bad, np.nan, np.where(allinf, np.inf, lse))


def softmax_from_lse(x, lse):
    """attn.softmax_from_lse: exp(x - lse), lse broadcast along its dim."""
    with np.errstate(invalid="ignore", over="ignore"):
        return np.exp(np.asarray(x, np.float64) - np.asarray(lse, np.float64))


def efficient(q, k, v, variant):
    q = np.asarray(q, np.float64)
    k = np.asarray(k, np.float64)
    v = np.asarray(v, np.float64)
    if variant == "softmax":
        rq = normalize(q, "softmax", q.ndim - 1)  # each query over features
        rk = normalize(k, "softmax", k.ndim - 2)  # each feature over positions
    elif variant == "scaling":
        n = q.shape[-2]
        rq = q / np.sqrt(n)
        rk = k / np.sqrt(n)
    else:
        raise ValueError(variant)
    return np.matmul(rq, np.matmul(_t(rk), v))


def external(x, mk, mv, eps=1e-9):
    a = np.matmul(np.asarray(x, np.float64), _t(np.asarray(mk, np.float64)))
    a = normalize(a, "softmax", a.ndim - 2)          # over positions, per slot
    a = a / (eps + a.sum(axis=-1, keepdims=True))    # over slots, per position
    return np.matmul(a, np.asarray(mv, np.float64))


def grid_sample(img, grid, align_corners):
    """torch.nn.functional.grid_sample(img, grid, mode='bilinear',
    padding_mode='zeros', align_corners=...) in numpy.

    img (B, C, H, W), grid (B, Ho, Wo, 2) as (x, y) in [-1, 1] -> (B, C, Ho, Wo).
    """
    B, C, H, W = img.shape
    gx = grid[..., 0]
    gy = grid[..., 1]
    if align_corners:
        ix = (gx + 1.0) / 2.0 * (W - 1)
        iy = (gy + 1.0) / 2.0 * (H - 1)
    else:
        ix = ((gx + 1.0) * W - 1.0) / 2.0
        iy = ((gy + 1.0) * H - 1.0) / 2.0
    x0 = np.floor(ix)
    y0 = np.floor(iy)
    x1 = x0 + 1
    y1 = y0 + 1
    wx1 = ix - x0
    wx0 = 1.0 - wx1
    wy1 = iy - y0
    wy0 = 1.0 - wy1
    out = np.zeros(gx.shape + (C,))
    bidx = np.arange(B).reshape((B,) + (1,) * (gx.ndim - 1))
    bidx = np.broadcast_to(bidx, gx.shape)
    for xc, yc, w in ((x0, y0, wx0 * wy0), (x1, y0, wx1 * wy0),
                      (x0, y1, wx0 * wy1), (x1, y1, wx1 * wy1)):
        ok = (xc >= 0) & (xc <= W - 1) & (yc >= 0) & (yc <= H - 1)
        xi = np.clip(xc, 0, W - 1).astype(np.int64)
        yi = np.clip(yc, 0, H - 1).astype(np.int64)
        vals = img[bidx, :, yi, xi]                      # (B, Ho, Wo, C)
        out += np.where(ok[..., None], w[..., None] * vals, 0.0)
    return np.moveaxis(out, -1, 1)


def _sample_levels(value, loc, levels, align_corners):
    """Per level: (N*M, D, Lq, P) samples, as in ms_deform_attn_core_pytorch."""
    value = np.asarray(value, np.float64)
    loc = np.asarray(loc, np.float64)
    N, S, M, D = value.shape
    _, Lq, _, L, P, _ = loc.shape
    assert L == len(levels) and S == sum(h * w for h, w in levels)
    splits = np.cumsum([h * w for h, w in levels])[:-1]
    value_list = np.split(value, splits, axis=1)
    grids = 2.0 * loc - 1.0
    out = []
    for lid, (H, W) in enumerate(levels):
        vl = value_list[lid].reshape(N, H * W, M * D)
        vl = np.swapaxes(vl, 1, 2).reshape(N * M, D, H, W)
        gl = np.swapaxes(grids[:, :, :, lid], 1, 2).reshape(N * M, Lq, P, 2)
        out.append(grid_sample(vl, gl, align_corners))
    return out, (N, Lq, M, L, P, D)


def deformable(value, loc, weights, levels, align_corners=False):
    samples, (N, Lq, M, L, P, D) = _sample_levels(value, loc, levels,
                                                  align_corners)
    w = np.asarray(weights, np.float64)
    w = np.swapaxes(w, 1, 2).reshape(N * M, 1, Lq, L * P)
    st = np.stack(samples, axis=-2).reshape(N * M, D, Lq, L * P)
    out = (st * w).sum(-1).reshape(N, M * D, Lq)
    return np.swapaxes(out, 1, 2)


def bilinear_gather(value, loc, levels, align_corners=False):
    samples, (N, Lq, M, L, P, D) = _sample_levels(value, loc, levels,
                                                  align_corners)
    per_level = []
    for s in samples:                       # (N*M, D, Lq, P)
        s = s.reshape(N, M, D, Lq, P)
        per_level.append(np.transpose(s, (0, 3, 1, 4, 2)))  # N, Lq, M, P, D
    return np.stack(per_level, axis=3)      # N, Lq, M, L, P, D


# ---------------------------------------------------------------------------
# Cases: one per function of the specs in Inputs/ (names are unique).
# ---------------------------------------------------------------------------

LEVELS = [(6, 5), (3, 4), (2, 2)]
SCATTER_LEVELS = [(3, 4), (2, 3)]
EXT = [("softmax", "queries"), ("sum", "keys", 1e-9)]


def _dp(norm, **kw):
    return lambda a: dot_product(a["q"], a["k"], a["v"], norm,
                                 mask=a.get("mask"), **kw)


CASES = {
    # --- dot_product.mlir
    "softmax_scale": _dp([("softmax", "keys")], scale=0.5),
    "softmax_causal_eq": _dp([("softmax", "keys")], scale=0.7, causal=True),
    "softmax_causal_n_lt_m": _dp([("softmax", "keys")], scale=0.5, causal=True),
    "softmax_causal_n_gt_m": _dp([("softmax", "keys")], scale=0.5, causal=True),
    "softmax_mask": _dp([("softmax", "keys")], scale=0.25),
    "softmax_mask_bcast": _dp([("softmax", "keys")]),
    "softmax_mask_neginf": _dp([("softmax", "keys")], scale=0.5),
    "count_keys": _dp([("count", "keys")]),
    "count_keys_causal": _dp([("count", "keys")], causal=True),
    "count_keys_causal_mask": _dp([("count", "keys")], causal=True),
    "sum_elu": _dp([("sum", "keys")], fmap="elu_plus_one"),
    "sum_relu": _dp([("sum", "keys", 1e-3)], fmap="relu"),
    "sum_elu_signed": _dp([("sum", "keys")], fmap="elu_plus_one"),
    "sum_relu_signed": _dp([("sum", "keys", 1e-3)], fmap="relu"),
    "linear_causal": _dp([("sum", "keys")], fmap="elu_plus_one", causal=True),
    "linear_causal_signed": _dp([("sum", "keys")], fmap="elu_plus_one",
                                causal=True),
    "double_norm": _dp(EXT),
    "double_norm_causal": _dp(EXT, causal=True),
    "softmax_queries_causal": _dp([("softmax", "queries")], causal=True),
    "three_steps": _dp([("count", "queries"), ("softmax", "keys"),
                        ("none", "keys")], scale=2.0),
    "none_scale": _dp([("none", "keys")], scale=0.3),
    "mha_cross": _dp([("softmax", "keys")], scale=0.5),
    "kv_rank2_bcast": _dp([("softmax", "keys")], scale=0.5),
    "unit_dim_bcast": _dp([("softmax", "keys")]),
    "softmax_causal_f64": _dp([("softmax", "keys")], scale=0.5, causal=True),
    "linear_causal_f64": _dp([("sum", "keys")], fmap="elu_plus_one",
                             causal=True),
    "double_norm_f64": _dp(EXT),
    "mask_f64": _dp([("softmax", "keys"), ("sum", "queries", 0.5)],
                    scale=0.5, causal=True),
    # --- efficient.mlir
    "eff_softmax": lambda a: efficient(a["q"], a["k"], a["v"], "softmax"),
    "eff_softmax_bcast": lambda a: efficient(a["q"], a["k"], a["v"], "softmax"),
    "eff_scaling": lambda a: efficient(a["q"], a["k"], a["v"], "scaling"),
    "eff_softmax_f64": lambda a: efficient(a["q"], a["k"], a["v"], "softmax"),
    "eff_scaling_f64": lambda a: efficient(a["q"], a["k"], a["v"], "scaling"),
    # --- external.mlir
    "eanet": lambda a: external(a["x"], a["mk"], a["mv"]),
    "eanet_eps": lambda a: external(a["x"], a["mk"], a["mv"], eps=0.25),
    "eanet_f64": lambda a: external(a["x"], a["mk"], a["mv"]),
    # --- deformable.mlir
    "deform": lambda a: deformable(a["value"], a["loc"], a["w"], LEVELS),
    "deform_ac": lambda a: deformable(a["value"], a["loc"], a["w"], LEVELS,
                                      True),
    "deform_f64": lambda a: deformable(a["value"], a["loc"], a["w"], LEVELS),
    "deform_ac_f64": lambda a: deformable(a["value"], a["loc"], a["w"],
                                          LEVELS, True),
    # --- primitives.mlir
    "matmul_bcast": lambda a: matmul(a["a"], a["b"]),
    "matmul_tl": lambda a: matmul(a["a"], a["b"], transpose_lhs=True),
    "matmul_tr": lambda a: matmul(a["a"], a["b"], transpose_rhs=True),
    "matmul_tl_tr": lambda a: matmul(a["a"], a["b"], True, True),
    "normalize_softmax": lambda a: normalize(a["x"], "softmax", 1),
    "normalize_sum": lambda a: normalize(a["x"], "sum", 1, 1e-3),
    "normalize_count": lambda a: normalize(a["x"], "count", 1),
    "normalize_none": lambda a: normalize(a["x"], "none", 1),
    "masked_softmax_cols": lambda a: normalize(causal_mask(a["x"]),
                                               "softmax", 1),
    "scale_op": lambda a: 0.375 * np.asarray(a["x"], np.float64),
    "prefix_sum_mid": lambda a: prefix_sum(a["x"], 1),
    "causal_mask_inf": lambda a: causal_mask(a["x"]),
    "causal_mask_zero": lambda a: causal_mask(a["x"], 0.0),
    "feature_map_elu": lambda a: feature_map(a["x"], "elu_plus_one"),
    "feature_map_relu": lambda a: feature_map(a["x"], "relu"),
    "add_bcast": lambda a: np.asarray(a["a"], np.float64) + a["b"],
    "prefix_sum_exclusive": lambda a: prefix_sum(a["x"], 1, exclusive=True),
    "mul_bcast": lambda a: np.asarray(a["a"], np.float64) * a["b"],
    "div_bcast_eps": lambda a: np.asarray(a["a"], np.float64) / (a["b"] + 0.25),
    "reduce_sum_mid": lambda a: np.asarray(a["x"], np.float64).sum(
        axis=1, keepdims=True),
    "gather": lambda a: bilinear_gather(a["value"], a["loc"], LEVELS),
    "gather_ac": lambda a: bilinear_gather(a["value"], a["loc"], LEVELS,
                                           True),
    # Primitives of gradients; the feature map specs take x - 0.5.
    "feature_map_grad_identity": lambda a: feature_map_grad(
        a["x"] - 0.5, a["dy"], "identity"),
    "feature_map_grad_elu": lambda a: feature_map_grad(
        a["x"] - 0.5, a["dy"], "elu_plus_one"),
    "feature_map_grad_relu": lambda a: feature_map_grad(
        a["x"] - 0.5, a["dy"], "relu"),
    "broadcast_rank": lambda a: broadcast(a["x"], a["like"].shape),
    "broadcast_dyn": lambda a: broadcast(a["x"], a["like"].shape),
    "unbroadcast_rank": lambda a: unbroadcast(a["g"], a["like"].shape),
    "unbroadcast_unit": lambda a: unbroadcast(a["g"], a["like"].shape),
    "unbroadcast_dyn": lambda a: unbroadcast(a["g"], a["like"].shape),
    "prefix_sum_reverse": lambda a: prefix_sum(a["x"], 1, reverse=True),
    "prefix_sum_reverse_exclusive": lambda a: prefix_sum(
        a["x"], 2, exclusive=True, reverse=True),
    "prefix_sum_reverse_dyn": lambda a: prefix_sum(a["x"], 0, reverse=True),
    "scatter_pixels": lambda a: scatter_pixels(a["dy"], a["pixels"],
                                               SCATTER_LEVELS),
    "scatter_pixels_spread": lambda a: scatter_pixels(
        a["dy"], 8.0 * a["u"] - 2.0, SCATTER_LEVELS),
    "insert_slice": lambda a: insert_slice(a["src"], a["dest"], (1, 0),
                                           (1, 3)),
    "insert_slice_dyn": lambda a: insert_slice(a["src"], a["dest"], (1, 1),
                                               (2, 1)),
    "pad_dyn": lambda a: pad(a["x"], (0, 1), (-len(a["x"]) % 4, 0), 0.5),
    "chunk_sums_dyn": lambda a: pad(a["x"], (0, 0), (-len(a["x"]) % 4, 0),
                                    0.0).reshape(-1, 4, 3).sum(
                                        1, keepdims=True),
    "extract_slice_dyn": lambda a: a["x"][len(a["x"]) // 2:, 1::2],
    "insert_slice_sizes_dyn": lambda a: insert_slice(
        a["src"][:-1], a["dest"], (1, 1), (1, 2)),
    # The statistics a gradient takes from the forward, with an all -inf,
    # a NaN and a +inf key feature (gen_inputs.py).
    "efficient_key_lse": lambda a: log_sum_exp(a["k"], 0),
    "softmax_from_lse": lambda a: softmax_from_lse(a["k"],
                                                   log_sum_exp(a["k"], 0)),
    "softmax_from_lse_f64": lambda a: softmax_from_lse(a["x"], a["lse"]),
}


def load_inputs(d):
    out = {}
    for f in sorted(os.listdir(d)):
        if f.endswith(".npy"):
            out[f[:-4]] = np.load(os.path.join(d, f)).astype(np.float64)
    return out


def compare(name, got, want, rtol):
    got = np.asarray(got)
    want = np.asarray(want, np.float64)
    if got.shape != want.shape:
        print("%s: shape %s, oracle %s" % (name, got.shape, want.shape))
        return False
    g = got.astype(np.float64)
    fin = np.isfinite(want)
    if not np.array_equal(g[~fin], want[~fin], equal_nan=True):
        print("%s: non-finite oracle entries not reproduced" % name)
        return False
    if not np.all(np.isfinite(g[fin])):
        print("%s: non-finite result where the oracle is finite" % name)
        return False
    err = np.abs(g[fin] - want[fin])
    lim = rtol * np.maximum(1.0, np.abs(want[fin]))
    rel = err / np.maximum(1.0, np.abs(want[fin]))
    mabs = err.max() if err.size else 0.0
    mrel = rel.max() if rel.size else 0.0
    ok = bool(np.all(err <= lim))
    print("%s: dtype %s shape %s max abs err %.3e max rel err %.3e "
          "(rtol %.0e) %s" % (name, got.dtype, got.shape, mabs, mrel, rtol,
                              "OK" if ok else "FAIL"))
    if not ok:
        idx = np.unravel_index(np.argmax(np.where(fin, np.abs(g - want), -1)),
                               want.shape)
        print("  worst at %s: got %r oracle %r" % (idx, g[idx], want[idx]))
    return ok


def self_test():
    """Hand-computed values, so the oracle itself is checked."""
    close = np.testing.assert_allclose
    img = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])          # 1x1x2x2
    g = np.array([[[[0.0, 0.0], [-1.0, -1.0], [1.0, 1.0], [1.0, -1.0],
                    [-2.0, 0.0], [0.5, -1.0]]]])          # (x, y)
    close(grid_sample(img, g, False)[0, 0, 0],
          [2.5, 0.25, 1.0, 0.5, 0.0, 0.5 * 2.0])
    close(grid_sample(img, g, True)[0, 0, 0], [2.5, 1.0, 4.0, 2.0, 1.0, 1.75])
    # Deformable: one level 1x2, two heads, head-major output.
    value = np.array([10.0, 30.0, 20.0, 40.0]).reshape(1, 2, 2, 1)
    loc = np.array([[0.25, 0.5], [0.75, 0.5]]).reshape(1, 1, 2, 1, 1, 2)
    w = np.array([2.0, 1.0]).reshape(1, 1, 2, 1, 1)
    close(deformable(value, loc, w, [(1, 2)]), [[[20.0, 40.0]]])
    close(bilinear_gather(value, loc, [(1, 2)]).ravel(), [10.0, 40.0])
    # Causal count divides by the full axis length; causal softmax.
    q = np.ones((2, 1))
    v = np.array([[1.0], [2.0]])
    close(dot_product(q, q, v, [("count", "keys")], causal=True),
          [[0.5], [1.5]])
    close(dot_product(q, q, v, [("softmax", "keys")], causal=True),
          [[1.0], [1.5]])
    # Softmax over queries, causal, n < m: key column 2 is fully hidden.
    q3 = np.ones((2, 1))
    k3 = np.ones((3, 1))
    v3 = np.array([[1.0], [2.0], [4.0]])
    close(dot_product(q3, k3, v3, [("softmax", "queries")], causal=True),
          [[0.5], [0.5 + 2.0]])
    close(feature_map(np.array([-1.0, 0.0, 2.0]), "elu_plus_one"),
          [np.exp(-1.0), 1.0, 3.0])
    close(external(np.ones((2, 1)), np.ones((1, 1)), np.array([[3.0]]), 0.0),
          [[3.0], [3.0]])
    close(efficient(np.ones((4, 1)), np.ones((2, 1)), np.ones((2, 1)),
                    "scaling"), np.full((4, 1), 0.5))
    close(causal_mask(np.ones((2, 3)), 0.0), [[1, 0, 0], [1, 1, 0]])
    close(normalize(np.array([[1.0, 3.0]]), "sum", 1, 1.0), [[0.2, 0.6]])
    close(log_sum_exp(np.array([[0.0, -np.inf, 1.0, 2.0],
                                [0.0, -np.inf, np.nan, np.inf]]), 0),
          [[np.log(2.0), np.inf, np.nan, np.nan]])
    x = np.array([[1.0, -np.inf], [2.0, -np.inf], [-np.inf, -np.inf]])
    close(softmax_from_lse(x, log_sum_exp(x, 0)), normalize(x, "softmax", 0))
    # Primitives of gradients.
    close(feature_map_grad(np.array([-1.0, 0.0, 2.0]), np.full(3, 2.0),
                           "elu_plus_one"), [2.0 * np.exp(-1.0), 2.0, 2.0])
    close(feature_map_grad(np.array([-1.0, 0.0, 2.0]), np.full(3, 2.0),
                          "relu"), [0.0, 0.0, 2.0])
    close(unbroadcast(np.arange(6.0).reshape(1, 2, 3), (2, 1)), [[3.0], [12.0]])
    close(broadcast(np.array([[1.0], [2.0]]), (2, 2, 3))[1],
          [[1.0] * 3, [2.0] * 3])
    close(prefix_sum(np.array([1.0, 2.0, 4.0]), 0, reverse=True), [7, 6, 4])
    close(prefix_sum(np.array([1.0, 2.0, 4.0]), 0, True, True), [6, 4, 0])
    close(insert_slice(np.ones((2, 1)), np.zeros((3, 2)), (0, 1), (2, 1)),
          [[0, 1], [0, 0], [0, 1]])
    # Levels 1x2 (rows 0, 1) and 2x1 (rows 2, 3). Level 0: (1, 0), (1.9,
    # 0.5) and (1.5, 0) all floor to row 1 (1 + 2 + 16), (0, 1) is below
    # it. Level 1: only (0, 1) is inside, row 3 (8). NaN adds nothing.
    dy = np.array([1.0, 2.0, 4.0, 8.0, 16.0]).reshape(1, 1, 1, 1, 5, 1)
    px = np.array([[1, 0], [1.9, 0.5], [np.nan, 0], [0, 1], [1.5, 0]])
    both = np.concatenate([dy, dy], axis=3)
    pxs = np.stack([px, px]).reshape(1, 1, 1, 2, 5, 2)
    close(scatter_pixels(both, pxs, [(1, 2), (2, 1)]).ravel(),
          [0.0, 19.0, 0.0, 8.0])
    print("oracle self-test OK")
    return 0


def main(argv=None):
    if (argv if argv is not None else sys.argv[1:]) == ["--self-test"]:
        return self_test()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("case", choices=sorted(CASES))
    p.add_argument("input_dir")
    p.add_argument("results", nargs="+")
    args = p.parse_args(argv)
    want = CASES[args.case](load_inputs(args.input_dir))
    wants = want if isinstance(want, tuple) else (want,)
    if len(wants) != len(args.results):
        print("expected %d results" % len(wants))
        return 1
    ok = all([compare(args.case, np.load(r), w, args.rtol)
              for r, w in zip(args.results, wants)])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
