"""A non-local block with efficient attention (Shen et al., WACV 2021) as a
PyTorch module whose attention is an attn kernel, checked against the same
module in plain PyTorch, forward and backward, and timed against it.

    PYTHONPATH=build/python .venv/bin/python examples/python/nonlocal_block.py

The block: Q, K, V are 1x1 convolutions of the feature map x (B, C, H, W);
E = rho_q(Q) (rho_k(K)^T V), with rho_q a softmax over each query's
features and rho_k a softmax over the positions of each key feature (the
paper's Eq. 4: linear in the number of positions n = H W, never n x n);
out = x + W_o E. attn.torch_op turns the `attn.efficient` spec into a
torch.library op with autograd, so the rest of the block stays PyTorch.
"""
import argparse
import statistics
import time

import torch

import attn

SPEC = """
func.func @efficient_attention(%q: tensor<{b}x{n}x{dk}xf32>, %k: tensor<{b}x{n}x{dk}xf32>, %v: tensor<{b}x{n}x{dv}xf32>) -> tensor<{b}x{n}x{dv}xf32> {{
  %e = attn.efficient %q, %k, %v variant softmax
      : tensor<{b}x{n}x{dk}xf32>, tensor<{b}x{n}x{dk}xf32>, tensor<{b}x{n}x{dv}xf32> -> tensor<{b}x{n}x{dv}xf32>
  return %e : tensor<{b}x{n}x{dv}xf32>
}}
"""


def efficient_attention_torch(q, k, v):
    """Shen et al.'s softmax form in plain PyTorch (the paper's code)."""
    return torch.softmax(q, dim=-1) @ (torch.softmax(k, dim=1).transpose(1, 2) @ v)


class NonLocalBlock(torch.nn.Module):
    def __init__(self, channels, key_channels, value_channels, attention):
        super().__init__()
        self.query = torch.nn.Conv2d(channels, key_channels, 1)
        self.key = torch.nn.Conv2d(channels, key_channels, 1)
        self.value = torch.nn.Conv2d(channels, value_channels, 1)
        self.out = torch.nn.Conv2d(value_channels, channels, 1)
        self.attention = attention

    def forward(self, x):
        b, _, h, w = x.shape

        def positions(t):  # (B, C, H, W) -> (B, H W, C), contiguous
            return t.flatten(2).transpose(1, 2).contiguous()

        e = self.attention(positions(self.query(x)), positions(self.key(x)),
                           positions(self.value(x)))
        return x + self.out(e.transpose(1, 2).reshape(b, -1, h, w))


def median_ms(step, repeats):
    step()  # warm up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        step()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--size", type=int, default=64,
                        help="feature map height and width")
    parser.add_argument("--channels", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=10,
                        help="calls per timing (their median)")
    parser.add_argument("--rounds", type=int, default=5,
                        help="alternations of the two blocks' timings")
    options = parser.parse_args()
    for name in ("batch", "size", "repeats", "rounds"):
        if getattr(options, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if options.channels < 2:
        parser.error("--channels must be at least 2 (the key projection "
                     "has half as many)")
    torch.manual_seed(0)
    b, c, s = options.batch, options.channels, options.size
    dk, dv = c // 2, c
    spec = SPEC.format(b=b, n=s * s, dk=dk, dv=dv)
    start = time.perf_counter()
    # save_statistics: the forward also returns the normalized context
    # softmax(K)^T V (dk x dv), which the backward multiplies with instead
    # of recomputing it, and the key softmax's log-sum-exp (docs/training.md,
    # "Saved statistics").
    op = attn.torch_op(spec, save_statistics=True)
    print(f"compiled @efficient_attention for B={b}, n={s * s}, dk={dk}, "
          f"dv={dv} in {time.perf_counter() - start:.1f} s")

    with_attn = NonLocalBlock(c, dk, dv, op)
    plain = NonLocalBlock(c, dk, dv, efficient_attention_torch)
    plain.load_state_dict(with_attn.state_dict())
    x = torch.randn(b, c, s, s)

    # Forward and backward agree with plain PyTorch.
    results = []
    for block in (with_attn, plain):
        block.zero_grad()
        xg = x.clone().requires_grad_()
        y = block(xg)
        (y * torch.linspace(-1, 1, y.numel()).reshape(y.shape)).sum().backward()
        results.append([y.detach(), xg.grad] +
                       [p.grad for p in block.parameters()])

    def rel(a, b, scale):
        return ((a - b).abs().max() / scale).item()

    forward_err = rel(results[0][0], results[1][0], results[1][0].abs().max())
    # Relative to the largest gradient entry: the key bias's gradient is 0
    # in exact arithmetic (rho_k's softmax over positions ignores a per-
    # feature shift), so both sides hold only rounding noise there.
    largest = max(g.abs().max() for g in results[1][1:])
    backward_err = max(rel(a, b, largest)
                       for a, b in zip(results[0][1:], results[1][1:]))
    print(f"forward:  max rel err vs PyTorch {forward_err:.1e}")
    print(f"backward: max rel err vs PyTorch {backward_err:.1e} "
          f"(dx and every weight, relative to the largest gradient)")
    ok = forward_err < 1e-4 and backward_err < 1e-4

    def forward_backward(block):
        def step():
            block.zero_grad()
            block(x.requires_grad_()).sum().backward()
        return step

    # The two blocks take turns, round by round, so a slow spell of a shared
    # host falls on both (timed one after the other, the first one timed
    # took the spell alone); each time is the median over the rounds.
    blocks = (("attn", with_attn), ("PyTorch", plain))
    times = {label: ([], []) for label, _ in blocks}
    for _ in range(options.rounds):
        for label, block in blocks:
            with torch.no_grad():
                times[label][0].append(median_ms(lambda: block(x),
                                                 options.repeats))
            times[label][1].append(median_ms(forward_backward(block),
                                             options.repeats))
    for label, _ in blocks:
        forward, both = (statistics.median(t) for t in times[label])
        print(f"time {label:8s} forward {forward:8.2f} ms   forward+backward "
              f"{both:8.2f} ms   (median of {options.rounds} rounds of "
              f"{options.repeats}, {torch.get_num_threads()} threads)")
    speedups = [statistics.median(p / a for a, p in zip(times["attn"][i],
                                                          times["PyTorch"][i]))
                for i in range(2)]
    print(f"attn speed-up over PyTorch, median of the rounds: forward "
          f"{speedups[0]:.2f}x, forward+backward {speedups[1]:.2f}x")
    if not ok:
        raise SystemExit("nonlocal_block: attn and PyTorch disagree")


if __name__ == "__main__":
    main()
