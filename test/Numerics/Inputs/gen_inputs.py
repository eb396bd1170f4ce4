#!/usr/bin/env python3
"""Write hand-made inputs for the oracle tests that `attn-run --random` cannot
produce ([0,1) only): signed feature-map inputs, -inf mask entries, deformable sampling
locations in [-0.3, 1.3) plus exact border/corner cases, and integer pixels
in and around the levels of scatter_pixels (with fractions, NaN and inf).

Usage: gen_inputs.py CASE DIR SEED   (writes DIR/<argname>.npy)
"""
import os
import sys

import numpy as np

LEVELS = [(6, 5), (3, 4), (2, 2)]
N, LQ, M, L, P, D = 2, 3, 2, 3, 2, 3


def deform_inputs(rng, dtype, with_weights=True):
    S = sum(h * w for h, w in LEVELS)
    value = rng.uniform(-1.0, 1.0, (N, S, M, D))
    loc = rng.uniform(-0.3, 1.3, (N, LQ, M, L, P, 2))
    # Exact borders on every level: sample (n=0, q=0..2, m, l, p) pins x (and
    # y) to values whose pixel coordinate is exactly -1, 0, W-1, W (both
    # align_corners conventions), to 0 and 1, and just outside the level.
    for lid, (h, w) in enumerate(LEVELS):
        xs = [0.0, 1.0, -0.5 / w, 0.5 / w, 1.0 - 0.5 / w, 1.0 + 0.5 / w,
              -1.0 / (w - 1), 1.0 + 1.0 / (w - 1), -0.3, 1.29]
        ys = [0.0, 1.0, -0.5 / h, 0.5 / h, 1.0 - 0.5 / h, 1.0 + 0.5 / h,
              -1.0 / (h - 1), 1.0 + 1.0 / (h - 1), 1.29, -0.3]
        k = 0
        for q in range(LQ):
            for m in range(M):
                for p in range(P):
                    if k < len(xs):
                        loc[0, q, m, lid, p] = (xs[k], ys[(k + 3) % len(ys)])
                    k += 1
        # Points exactly on grid lines through the interior.
        loc[1, 0, 0, lid, 0] = (1.5 / w, 0.5)
        loc[1, 0, 1, lid, 1] = (0.5, 2.5 / h)
    out = {"value": value, "loc": loc}
    if with_weights:
        out["w"] = rng.uniform(-1.0, 1.0, (N, LQ, M, L, P))
    return {k: v.astype(dtype) for k, v in out.items()}


def signed_qkv(rng, shapes, dtype):
    return {n: rng.uniform(-1.0, 1.0, s).astype(dtype)
            for n, s in zip("qkv", shapes)}


def neginf_mask(rng):
    # Additive mask with -inf entries; row 1 is -inf everywhere, so its
    # softmax is over only -inf scores and gives 0 (attn.normalize's rule).
    mask = rng.uniform(-2.0, 1.0, (3, 5))
    mask[0, [1, 3]] = -np.inf
    mask[1, :] = -np.inf
    mask[2, 0] = -np.inf
    out = {n: rng.uniform(0.0, 1.0, s) for n, s in
           zip("qkv", [(2, 3, 4), (2, 5, 4), (2, 5, 2)])}
    out["mask"] = mask
    return {k: v.astype(np.float32) for k, v in out.items()}


def signed_grad(rng):
    # x - 0.5 is the feature map's input (primitives.mlir): entries of 0.5
    # make it exactly 0, where relu' is 0 and elu+1' is 1 from both sides.
    x = rng.uniform(-2.0, 2.0, (3, 8))
    x[0, :3] = 0.5
    x[1, 0] = 0.5 + 1e-3
    x[1, 1] = 0.5 - 1e-3
    dy = rng.uniform(-1.0, 1.0, (3, 8))
    return {"x": x.astype(np.float32), "dy": dy.astype(np.float32)}


def key_statistics(rng):
    # K (m, dk) = (37, 8) over the positions, and a (2, 3, 5) f64 x along
    # its last dim: one all -inf slice, one with a NaN, one with a +inf,
    # one with some -inf entries; the rest random.
    k = rng.uniform(-3.0, 3.0, (37, 8))
    k[:, 0] = -np.inf
    k[5, 1] = np.nan
    k[9, 2] = np.inf
    k[::3, 3] = -np.inf
    x = rng.uniform(-3.0, 3.0, (2, 3, 5))
    x[0, 0, :] = -np.inf
    x[0, 1, 2] = np.nan
    x[1, 2, 4] = np.inf
    x[1, 0, ::2] = -np.inf
    # x's log-sum-exp per slice: +inf for the all -inf one, NaN for the NaN
    # and +inf ones.
    with np.errstate(divide="ignore"):
        lse = np.log(np.exp(x).sum(axis=2, keepdims=True))
    lse[0, 0] = np.inf
    lse[0, 1] = lse[1, 2] = np.nan
    return {"k": k.astype(np.float32), "x": x, "lse": lse}


SCATTER_LEVELS = [(3, 4), (2, 3)]


def scatter_inputs(rng):
    # Pixels (N, Lq, M, L, P, 2) = (2, 3, 2, 2, 4, 2) in [-1.5, 5.5): inside
    # and outside both levels, fractional (rounded down). Sample (n=0, q=0)
    # pins every border of each level: x in {-1, 0, W-1, W} against y in
    # {0, H-1, -1, H}, a coordinate just below 0, and NaN / inf.
    N, Lq, M, L, P = 2, 3, 2, 2, 4
    pixels = rng.uniform(-1.5, 5.5, (N, Lq, M, L, P, 2))
    for lid, (h, w) in enumerate(SCATTER_LEVELS):
        pins = [(-1, 0), (0, h - 1), (w - 1, -1), (w, h - 1),
                (w - 1, h), (w - 0.5, h - 0.5), (-1e-6, 0), (0, -1e-6)]
        for k, xy in enumerate(pins):
            pixels[0, 0, k // P, lid, k % P] = xy
        pixels[1, 0, 0, lid, 0] = (np.nan, 0)
        pixels[1, 0, 0, lid, 1] = (0, np.inf)
        pixels[1, 0, 1, lid, 2] = (-np.inf, 1)
        # Several samples of one head on the same pixel: their sum.
        pixels[1, 1:, 1, lid, 3] = (1.25, 1.75)
    dy = rng.uniform(-1.0, 1.0, (N, Lq, M, L, P, 3))
    return {"dy": dy.astype(np.float32), "pixels": pixels.astype(np.float32)}


CASES = {
    "softmax_mask_neginf": neginf_mask,
    "sum_elu_signed": lambda r: signed_qkv(r, [(2, 4, 3), (2, 5, 3), (2, 5, 2)], np.float32),
    "sum_relu_signed": lambda r: signed_qkv(r, [(2, 4, 3), (2, 5, 3), (2, 5, 2)], np.float32),
    "linear_causal_signed": lambda r: signed_qkv(r, [(2, 6, 3), (2, 6, 3), (2, 6, 2)], np.float32),
    "linear_causal_f64": lambda r: signed_qkv(r, [(2, 6, 3), (2, 6, 3), (2, 6, 2)], np.float64),
    "feature_map_elu": lambda r: {"x": r.uniform(-2, 2, (3, 8)).astype(np.float32)},
    "feature_map_relu": lambda r: {"x": r.uniform(-2, 2, (3, 8)).astype(np.float32)},
    "deform": lambda r: deform_inputs(r, np.float32),
    "deform_ac": lambda r: deform_inputs(r, np.float32),
    "deform_f64": lambda r: deform_inputs(r, np.float64),
    "deform_ac_f64": lambda r: deform_inputs(r, np.float64),
    "gather": lambda r: deform_inputs(r, np.float32, False),
    "gather_ac": lambda r: deform_inputs(r, np.float32, False),
    "feature_map_grad_identity": signed_grad,
    "feature_map_grad_elu": signed_grad,
    "feature_map_grad_relu": signed_grad,
    "scatter_pixels": scatter_inputs,
    "efficient_key_lse": key_statistics,
    "softmax_from_lse": key_statistics,
    "softmax_from_lse_f64": key_statistics,
}


def main():
    case, d, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(d, exist_ok=True)
    for name, arr in CASES[case](np.random.default_rng(seed)).items():
        np.save(os.path.join(d, name + ".npy"), arr)


if __name__ == "__main__":
    main()
