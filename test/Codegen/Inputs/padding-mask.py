"""Inputs of @padding in attention-grad-mask.mlir: Q, K, V and dO in [0, 1),
and an 8x8 additive mask with finite entries, -inf entries (keys 6 and 7
padded for rows 0-5) and a row of -inf only (row 3: an empty row, P = 0)."""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(7)
for name, shape in [("q", (2, 8, 4)), ("k", (2, 8, 4)), ("v", (2, 8, 3)),
                    ("do", (2, 8, 3))]:
    np.save(f"{out}/{name}.npy", rng.random(shape, dtype=np.float32))
mask = rng.standard_normal((8, 8)).astype(np.float32)
mask[:6, 6:] = -np.inf
mask[3, :] = -np.inf
np.save(f"{out}/mask.npy", mask)
