"""Inputs of a product A B whose rows each pick one row of B, for tests of
products in bf16 pairs (bf16-linear.test): A and B as f32 .npy files
written to OUT/a.npy and OUT/b.npy.

Each row of A (each column with --transpose-lhs) has one entry 1 at a
random k and 2^-16 elsewhere (with --elu, 0 and -16, which elu + 1 maps
to 1 and about 1e-7), so output row i is close to row k(i) of B (column
k(i) with --transpose-rhs), and a product that pairs the wrong k reads a
different row. B is uniform in [0.5, 1), so every term is positive and
the tests' relative error bounds hold.

usage: peaked_product_inputs.py OUT A_SHAPE B_SHAPE [--transpose-lhs]
       [--transpose-rhs] [--elu]      (shapes like 2x300x64)"""
import argparse

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("shapes", nargs=2)
parser.add_argument("--transpose-lhs", action="store_true")
parser.add_argument("--transpose-rhs", action="store_true")
parser.add_argument("--elu", action="store_true")
args = parser.parse_args()
ashape, bshape = (tuple(map(int, s.split("x"))) for s in args.shapes)
rng = np.random.default_rng(22)
peak, rest = (0.0, -16.0) if args.elu else (1.0, 2.0**-16)
a = np.full(ashape, rest)
for index in np.ndindex(*ashape[:-2]):
    rows = a[index].T if args.transpose_lhs else a[index]
    rows[np.arange(rows.shape[0]), rng.integers(0, rows.shape[1], rows.shape[0])] = peak
b = rng.uniform(0.5, 1, bshape)
np.save(f"{args.out}/a.npy", a.astype(np.float32))
np.save(f"{args.out}/b.npy", b.astype(np.float32))
