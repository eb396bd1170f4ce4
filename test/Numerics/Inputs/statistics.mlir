// The statistics a gradient takes from its forward (f32 and f64 only, the
// types a forward saves them in; not in primitives.mlir, which
// reduced-precision.test also runs in bf16 and f16). gen_inputs.py makes
// the inputs: an all -inf, a NaN and a +inf slice, and some -inf entries.

// attn.efficient's key log-sum-exp (`with_context`), and the softmax's
// weights from it.
func.func @efficient_key_lse(%k: tensor<37x8xf32>) -> tensor<1x8xf32> {
  %o, %c, %lse = attn.efficient %k, %k, %k variant softmax with_context
      : tensor<37x8xf32>, tensor<37x8xf32>, tensor<37x8xf32>
      -> tensor<37x8xf32>, tensor<8x8xf32>, tensor<1x8xf32>
  return %lse : tensor<1x8xf32>
}

func.func @softmax_from_lse(%k: tensor<37x8xf32>) -> tensor<37x8xf32> {
  %o, %c, %lse = attn.efficient %k, %k, %k variant softmax with_context
      : tensor<37x8xf32>, tensor<37x8xf32>, tensor<37x8xf32>
      -> tensor<37x8xf32>, tensor<8x8xf32>, tensor<1x8xf32>
  %w = attn.softmax_from_lse %k, %lse dim 0 : tensor<37x8xf32>, tensor<1x8xf32>
  return %w : tensor<37x8xf32>
}

// f64 along the last dim, the slices' log-sum-exp given (gen_inputs.py).
func.func @softmax_from_lse_f64(%x: tensor<2x3x5xf64>, %lse: tensor<2x3x1xf64>) -> tensor<2x3x5xf64> {
  %w = attn.softmax_from_lse %x, %lse dim 2 : tensor<2x3x5xf64>, tensor<2x3x1xf64>
  return %w : tensor<2x3x5xf64>
}

// Dynamic sizes: an lse with more than one row is an error, not a read
// past it (softmax_from_lse.test).
func.func @softmax_from_lse_dyn(%x: tensor<?x8xf32>, %lse: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %w = attn.softmax_from_lse %x, %lse dim 0 : tensor<?x8xf32>, tensor<?x8xf32>
  return %w : tensor<?x8xf32>
}
