// RUN: attn-run %s --random 7934 --quiet --grad --check --grad-save-statistics
// EXPECT: ok
func.func @f(%t0: tensor<1x1x3x9x63xf16>, %t1: tensor<1x1x3x63x63xf16>, %t2: tensor<1x1x3x63x1xf16>, %t3: tensor<1x1x1x1x1xf16>) -> tensor<?x1x3x9x1xf16> {
  %v1 = attn.efficient %t0, %t1, %t2 variant softmax
      : tensor<1x1x3x9x63xf16>, tensor<1x1x3x63x63xf16>, tensor<1x1x3x63x1xf16> -> tensor<?x1x3x9x1xf16>
  %v2 = attn.mul %v1, %t3
      : tensor<?x1x3x9x1xf16>, tensor<1x1x1x1x1xf16> -> tensor<?x1x3x9x1xf16>
  return %v2 : tensor<?x1x3x9x1xf16>
}
