"""Inputs whose attention weights each have one dominant entry, for tests of
rounded weights (bf16-weights.test, bf16-efficient.test): Q, K and V as f32
.npy files (rounded to bf16 on load) written to OUT/q.npy, k.npy, v.npy.

Uniform inputs make every output close to V's mean (a weighted mean of many
rows), so a wrong weight, pair or row would go unseen. Here each output is
close to one row of V, and V is in [0.5, 1), where the tests' error bounds
hold.

  softmax:   K uniform in [-1, 1); query i is alpha K[p(i)] for a random key
             p(i) (p(i) <= i with --causal), alpha such that its score is
             log(2.2 m) + 1: about 70% of the weight, the rest spread over
             the other keys.
  efficient: Q and K uniform in [-8, 0) but for one 8 per row of Q (99.9%
             of its softmax over features) and one per feature of K (about
             92% of its softmax over 2048 positions).
  linear:    for the elu + 1 feature map (phi(x) = exp(x) for x <= 0): Q
             and K -16 (phi about 1e-7) but for one 8 per row of Q and one
             per feature of K, at distinct positions (phi = 9): query i
             attends to the one key whose 8 is at its feature, with all
             but about 1e-4 of its weight (bf16-linear.test).

usage: peaked_attention_inputs.py OUT softmax|efficient|linear Q_SHAPE K_SHAPE
       V_SHAPE [--scale S] [--causal]      (shapes like 2x4x96x64; K and V
       may have 1 where Q has heads, as broadcast)"""
import argparse

import numpy as np

parser = argparse.ArgumentParser()
parser.add_argument("out")
parser.add_argument("mode", choices=["softmax", "efficient", "linear"])
parser.add_argument("shapes", nargs=3)
parser.add_argument("--scale", type=float, default=1.0)
parser.add_argument("--causal", action="store_true")
args = parser.parse_args()
qshape, kshape, vshape = (tuple(map(int, s.split("x"))) for s in args.shapes)
rng = np.random.default_rng(22)
n, m = qshape[-2], kshape[-2]
if args.mode == "softmax":
    k = rng.uniform(-1, 1, kshape)
    keys = np.broadcast_to(k, qshape[:-2] + kshape[-2:])
    q = np.empty(qshape)
    # The other scores are about normal with a standard deviation near
    # 1.3, so they add up to about 2.2 m; exp(score) is e times that.
    score = np.log(2.2 * m) + 1
    for index in np.ndindex(*qshape[:-2]):
        for i in range(n):
            p = rng.integers(0, (min(i, m - 1) if args.causal else m - 1) + 1)
            key = keys[index][p]
            q[index][i] = score / (args.scale * key.dot(key)) * key
elif args.mode == "linear":
    q = np.full(qshape, -16.0)
    k = np.full(kshape, -16.0)
    for index in np.ndindex(*qshape[:-2]):
        q[index][np.arange(n), rng.integers(0, qshape[-1], n)] = 8
    for index in np.ndindex(*kshape[:-2]):
        k[index][rng.permutation(m)[:kshape[-1]], np.arange(kshape[-1])] = 8
else:
    q = rng.uniform(-8, 0, qshape)
    k = rng.uniform(-8, 0, kshape)
    for index in np.ndindex(*qshape[:-2]):
        q[index][np.arange(n), rng.integers(0, qshape[-1], n)] = 8
    for index in np.ndindex(*kshape[:-2]):
        k[index][rng.permutation(m)[:kshape[-1]], np.arange(kshape[-1])] = 8
v = rng.uniform(0.5, 1, vshape)
for name, value in (("q", q), ("k", k), ("v", v)):
    np.save(f"{args.out}/{name}.npy", value.astype(np.float32))
