"""Inputs of deformable.mlir's corner cases (deformable-*.test).

    deformable-corners.py DIR ALIGN_CORNERS(0|1) SEED [f32|f64]

Writes DIR/value.npy, DIR/loc.npy, DIR/w.npy for levels 5x7 and 3x2, N = 2,
Lq = 7, M = 3, P = 3, D = 5. Batch 0 places every sample at a chosen pixel
(x, y) of its level, converted to the normalized location of the given
convention (pixel = loc * size - 0.5, or loc * (size - 1)); the cases cycle
through (query, head, point) so each appears on both levels:

  interior, exact pixel centers, the last pixel center, corners outside on
  the left, right, top, bottom, at each of the four image corners (one
  corner inside), exactly on the -1 border, fully outside left, right,
  above, below.

Query 6, head 2 of batch 0 samples outside every level at every point, so
its output is exactly 0. Batch 1 is uniform in [-0.2, 1.2).
"""
import os
import sys

import numpy as np

LEVELS = [(5, 7), (3, 2)]
N, LQ, M, P, D = 2, 7, 3, 3, 5


def cases(h, w):
    cx, cy = 0.41 * (w - 1), 0.57 * (h - 1)  # an interior coordinate
    return [
        (cx, cy),                       # interior
        (1.0 if w > 1 else 0.0, 0.0),   # exactly on a pixel center
        (w - 1.0, h - 1.0),             # last pixel center (x1, y1 outside)
        (-0.4, cy),                     # left corners outside
        (w - 1 + 0.3, cy),              # right corners outside
        (cx, -0.6),                     # top corners outside
        (cx, h - 1 + 0.45),             # bottom corners outside
        (-0.3, -0.7),                   # top-left: one corner inside
        (w - 0.8, -0.2),                # top-right
        (-0.5, h - 0.9),                # bottom-left
        (w - 0.6, h - 0.55),            # bottom-right
        (-1.0, cy),                     # exactly on the -1 border
        (-1.5, cy),                     # fully outside, left
        (w + 0.2, cy),                  # fully outside, right
        (cx, -1.25),                    # fully outside, above
        (cx, h + 0.2),                  # fully outside, below
    ]


def normalized(pixel, size, align_corners):
    if align_corners:
        # size 1: every location maps to pixel 0; keep the pixel's sign so
        # outside cases stay outside.
        return pixel / (size - 1) if size > 1 else pixel
    return (pixel + 0.5) / size


def main():
    directory, align, seed = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
    dtype = np.float64 if sys.argv[4:5] == ["f64"] else np.float32
    rng = np.random.default_rng(seed)
    rows = sum(h * w for h, w in LEVELS)
    value = rng.uniform(-1.0, 1.0, (N, rows, M, D))
    loc = rng.uniform(-0.2, 1.2, (N, LQ, M, len(LEVELS), P, 2))
    weights = rng.uniform(-1.0, 1.0, (N, LQ, M, len(LEVELS), P))
    for lid, (h, w) in enumerate(LEVELS):
        table = cases(h, w)
        k = lid  # shift the cycle so levels see different (q, m, p)
        for q in range(LQ):
            for m in range(M):
                for p in range(P):
                    px, py = table[k % len(table)]
                    if q == LQ - 1 and m == M - 1:
                        px, py = -2.0 - p, h + 1.0  # outside every level
                    loc[0, q, m, lid, p] = (normalized(px, w, align),
                                            normalized(py, h, align))
                    k += 1
    os.makedirs(directory, exist_ok=True)
    for name, array in (("value", value), ("loc", loc), ("w", weights)):
        np.save(os.path.join(directory, name + ".npy"), array.astype(dtype))


if __name__ == "__main__":
    main()
