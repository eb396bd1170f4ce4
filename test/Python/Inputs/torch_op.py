"""attn.torch_op: a spec function as a torch.library custom op. Checks its
registration (torch.library.opcheck: schema, fake tensors, autograd), its
values and gradients against the same formula in PyTorch, gradcheck in f64,
torch.compile of a model around it, and an argument marked no_grad."""
import torch

import attn

torch.manual_seed(0)
SPEC = """
func.func @softmax_attention(%q: tensor<2x48x16xf64>, %k: tensor<2x40x16xf64>, %v: tensor<2x40x8xf64>) -> tensor<2x48x8xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.25
      : tensor<2x48x16xf64>, tensor<2x40x16xf64>, tensor<2x40x8xf64> -> tensor<2x48x8xf64>
  return %o : tensor<2x48x8xf64>
}
"""


def softmax_attention(q, k, v):
    return torch.softmax(0.25 * q @ k.transpose(1, 2), -1) @ v


op = attn.torch_op(SPEC)
assert attn.torch_op(SPEC) is op  # registered once
args = [torch.randn(s, dtype=torch.float64, requires_grad=True)
        for s in ((2, 48, 16), (2, 40, 16), (2, 40, 8))]
out = op(*args)
expected = softmax_attention(*args)
print(f"forward: max err {(out - expected).abs().max().item():.1e}")
assert torch.allclose(out, expected, rtol=0, atol=1e-12)

cotangent = torch.randn_like(out)
grads = torch.autograd.grad(out, args, cotangent)
expected_grads = torch.autograd.grad(expected, args, cotangent)
for name, g, e in zip("qkv", grads, expected_grads):
    assert torch.allclose(g, e, rtol=0, atol=1e-12), name
print("backward: matches torch.autograd")

torch.library.opcheck(op, args)
print("opcheck: ok")
assert torch.autograd.gradcheck(op, args)
print("gradcheck: ok")


class Block(torch.nn.Module):
    """Projections around the attn op, compiled with torch.compile."""

    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(8, 8, dtype=torch.float64)

    def forward(self, q, k, v, attention):
        return self.proj(attention(q, k, v)).relu()


block = Block()
compiled = torch.compile(block, fullgraph=True)
got = compiled(*args, op)
want = block(*args, softmax_attention)
assert torch.allclose(got, want, rtol=0, atol=1e-12)
got.sum().backward()
print("torch.compile: fullgraph forward and backward ok")

# A {attn.no_grad} argument gets no gradient.
NO_GRAD = SPEC.replace("%v: tensor<2x40x8xf64>", "%v: tensor<2x40x8xf64> {attn.no_grad}")
frozen = attn.torch_op(NO_GRAD)
q, k, v = (a.detach().requires_grad_() for a in args)
dq, dk = torch.autograd.grad(frozen(q, k, v), (q, k), cotangent)
assert torch.allclose(dq, expected_grads[0], rtol=0, atol=1e-12)
print("no_grad: ok")

# save_statistics: the forward kernel also returns the row log-sum-exp and
# (f64 here) its output, which the gradient kernel takes instead of
# recomputing them; the op returns f's own result only.
kernel = attn.compile(SPEC, save_statistics=True)
assert kernel.saved_statistics == 2, kernel
o, lse, saved_o = kernel(*args)
expected_lse = torch.logsumexp(0.25 * args[0] @ args[1].transpose(1, 2), -1)
assert torch.allclose(o, expected, rtol=0, atol=1e-12)
assert torch.allclose(lse, expected_lse, rtol=0, atol=1e-12)
assert torch.equal(saved_o, o)
saving = attn.torch_op(SPEC, save_statistics=True)
out = saving(*args)
assert torch.allclose(out, expected, rtol=0, atol=1e-12)
for name, g, e in zip("qkv", torch.autograd.grad(out, args, cotangent),
                      expected_grads):
    assert torch.allclose(g, e, rtol=0, atol=1e-12), name
assert torch.autograd.gradcheck(saving, args)
print("save_statistics: ok")

# save_statistics with efficient attention: the forward also returns the
# normalized context softmax_positions(K)^T V, which the gradient kernel
# multiplies with instead of recomputing it, and the key softmax's
# log-sum-exp, from which it takes softmax_positions(K).
EFFICIENT = """
func.func @efficient(%q: tensor<2x48x16xf64>, %k: tensor<2x40x16xf64>, %v: tensor<2x40x8xf64>) -> tensor<2x48x8xf64> {
  %o = attn.efficient %q, %k, %v variant softmax
      : tensor<2x48x16xf64>, tensor<2x40x16xf64>, tensor<2x40x8xf64> -> tensor<2x48x8xf64>
  return %o : tensor<2x48x8xf64>
}
"""


def efficient_attention(q, k, v):
    return torch.softmax(q, -1) @ (torch.softmax(k, 1).transpose(1, 2) @ v)


kernel = attn.compile(EFFICIENT, save_statistics=True)
assert kernel.saved_statistics == 2, kernel
o, context, key_lse = kernel(*args)
expected = efficient_attention(*args)
assert torch.allclose(o, expected, rtol=0, atol=1e-12)
assert torch.allclose(context, torch.softmax(args[1], 1).transpose(1, 2)
                      @ args[2], rtol=0, atol=1e-12)
assert torch.allclose(key_lse, torch.logsumexp(args[1], 1, keepdim=True),
                      rtol=0, atol=1e-12)


def check_saving_op(spec, expected):
    """torch_op(save_statistics=True): f's own result, and gradients as
    autograd's of `expected` (and gradcheck's)."""
    saving = attn.torch_op(spec, save_statistics=True)
    out = saving(*args)
    assert torch.allclose(out, expected, rtol=0, atol=1e-12)
    for name, g, e in zip("qkv", torch.autograd.grad(out, args, cotangent),
                          torch.autograd.grad(expected, args, cotangent)):
        assert torch.allclose(g, e, rtol=0, atol=1e-12), name
    assert torch.autograd.gradcheck(saving, args)


check_saving_op(EFFICIENT, expected)
print("save_statistics, efficient attention: ok")

# save_statistics with bf16 efficient attention: the forward computes in
# f32 and saves an f32 context and key lse; the gradients, rounded to bf16
# once, are within bf16's unit roundoff 2^-8 (of the largest entry; f32
# arithmetic adds about 1e-6) of float64 autograd's on the same bf16
# values.
EFFICIENT_BF16 = EFFICIENT.replace("f64", "bf16")
kernel = attn.compile(EFFICIENT_BF16, save_statistics=True)
assert [t.dtype for t in kernel(*[a.bfloat16() for a in args])] == [
    torch.bfloat16, torch.float32, torch.float32]
halves = [a.detach().bfloat16().requires_grad_() for a in args]
out = attn.torch_op(EFFICIENT_BF16, save_statistics=True)(*halves)
half_cotangent = cotangent.bfloat16()
wide = [a.detach().double().requires_grad_() for a in halves]
for name, g, e in zip(
        "qkv", torch.autograd.grad(out, halves, half_cotangent),
        torch.autograd.grad(efficient_attention(*wide), wide,
                            half_cotangent.double())):
    error = float((g.double() - e).abs().max() / e.abs().max())
    assert g.dtype == torch.bfloat16 and error <= 2**-8 + 1e-5, (name, error)
print("save_statistics, bf16 efficient attention: ok")

# save_statistics with linear attention: the forward is the linear form and
# also returns its context phi(K)^T V and key sums phi(K)^T 1, which the
# gradient kernel takes instead of recomputing them.
LINEAR = """
func.func @linear(%q: tensor<2x48x16xf64>, %k: tensor<2x40x16xf64>, %v: tensor<2x40x8xf64>) -> tensor<2x48x8xf64> {
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<2x48x16xf64>, tensor<2x40x16xf64>, tensor<2x40x8xf64> -> tensor<2x48x8xf64>
  return %o : tensor<2x48x8xf64>
}
"""


def linear_attention(q, k, v):
    phi_q, phi_k = (torch.nn.functional.elu(x) + 1 for x in (q, k))
    return (phi_q @ (phi_k.transpose(1, 2) @ v)) / (
        phi_q @ phi_k.sum(1, keepdim=True).transpose(1, 2))


kernel = attn.compile(LINEAR, save_statistics=True)
assert kernel.saved_statistics == 2, kernel
o, context, key_sums = kernel(*args)
expected = linear_attention(*args)
phi_k = torch.nn.functional.elu(args[1]) + 1
assert torch.allclose(o, expected, rtol=0, atol=1e-12)
assert torch.allclose(context, phi_k.transpose(1, 2) @ args[2], rtol=1e-13,
                      atol=0)
assert torch.allclose(key_sums, phi_k.sum(1, keepdim=True), rtol=1e-13,
                      atol=0)
check_saving_op(LINEAR, expected)
print("save_statistics, linear attention: ok")

# save_statistics with double normalization (EANet's, here on batched
# queries and keys): the forward runs the primitive form and also returns
# the weights P, the softmax over queries of the scores, which the gradient
# kernel takes instead of recomputing the scores.
DOUBLE_NORM = """
func.func @double_norm(%q: tensor<2x48x16xf64>, %k: tensor<2x40x16xf64>, %v: tensor<2x40x8xf64>) -> tensor<2x48x8xf64> {
  %o = attn.dot_product %q, %k, %v norm [softmax over queries, sum over keys eps 1.0e-9]
      : tensor<2x48x16xf64>, tensor<2x40x16xf64>, tensor<2x40x8xf64> -> tensor<2x48x8xf64>
  return %o : tensor<2x48x8xf64>
}
"""


def double_norm_attention(q, k, v):
    weights = torch.softmax(q @ k.transpose(1, 2), 1)
    return (weights / (weights.sum(-1, keepdim=True) + 1e-9)) @ v


kernel = attn.compile(DOUBLE_NORM, save_statistics=True)
assert kernel.saved_statistics == 1, kernel
o, weights = kernel(*args)
expected = double_norm_attention(*args)
assert torch.allclose(o, expected, rtol=0, atol=1e-12)
assert torch.allclose(weights, torch.softmax(args[0] @ args[1].transpose(1, 2),
                                             1), rtol=0, atol=1e-12)
check_saving_op(DOUBLE_NORM, expected)
print("save_statistics, double normalization: ok")
