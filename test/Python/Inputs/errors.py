"""Every bad call gets an attn.Error (a ValueError) with a clear message;
the lit test checks the messages. Nothing crashes."""
import numpy as np
import torch

import attn

SPEC = """func.func @f(%q: tensor<4x8xf32>, %k: tensor<6x8xf32>, %v: tensor<6x2xf32>) -> tensor<4x2xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys]
      : tensor<4x8xf32>, tensor<6x8xf32>, tensor<6x2xf32> -> tensor<4x2xf32>
  return %o : tensor<4x2xf32>
}
"""


def expect_error(label, call):
    try:
        call()
    except attn.Error as error:
        assert isinstance(error, ValueError)
        print(f"{label}: {error}")
        return
    raise AssertionError(f"{label}: no error")


kernel = attn.compile(SPEC, name="spec.mlir")
q, k, v = (np.ones(s, np.float32) for s in ((4, 8), (6, 8), (6, 2)))
expect_error("count", lambda: kernel(q, k))
expect_error("shape", lambda: kernel(np.ones((5, 8), np.float32), k, v))
expect_error("rank", lambda: kernel(q.reshape(32), k, v))
expect_error("dtype", lambda: kernel(q.astype(np.float64), k, v))
expect_error("int dtype", lambda: kernel(q, k, v.astype(np.int32)))
expect_error("strided numpy", lambda: kernel(np.ones((4, 16), np.float32)[:, ::2], k, v))
expect_error("transposed torch", lambda: kernel(torch.ones(8, 4).t(), torch.ones(6, 8), torch.ones(6, 2)))
expect_error("meta device", lambda: kernel(torch.ones(4, 8, device="meta"), torch.ones(6, 8), torch.ones(6, 2)))
expect_error("not an array", lambda: kernel([[1.0]], k, v))
expect_error("out shape", lambda: kernel(q, k, v, out=np.empty((2, 4), np.float32)))
expect_error("out dtype", lambda: kernel(q, k, v, out=np.empty((4, 2), np.float64)))
expect_error("spec type", lambda: attn.compile(42))
expect_error("parse", lambda: attn.compile(SPEC.replace("tensor<4x2xf32> {", "tensor<4x2xf32> {\n  %bad = "), name="spec.mlir"))
expect_error("verifier", lambda: attn.compile(SPEC.replace("-> tensor<4x2xf32>\n", "-> tensor<4x3xf32>\n", 1), name="spec.mlir"))
expect_error("func", lambda: attn.compile(SPEC, func="g", name="spec.mlir"))
expect_error("pipeline", lambda: attn.compile(SPEC, pipeline="no-such-pass"))
expect_error("target", lambda: attn.compile(SPEC, target="no-such-target"))
expect_error("knob", lambda: attn.compile(SPEC, schedule={"attention.noSuchKnob": 1}))
expect_error("numpy bf16", lambda: attn.compile(SPEC.replace("f32", "bf16"))(q, k, v))
# The kernel still works after every error.
out = np.empty((4, 2), np.float32)
result = kernel(q, k, v, out=out)
assert result is out and np.allclose(out, 1.0)
print("still runs: ok")
