// RUN: attn-run %s --quiet --input arg0=%I/arg0.npy --input arg1=%I/arg1.npy --input arg2=%I/arg2.npy --input arg3=%I/arg3.npy --check
// EXPECT: ok
func.func @f(%arg0: tensor<1x?x?x24xbf16>, %arg1: tensor<?x?x1x64x24xbf16>, %arg2: tensor<1x1x?x64x2xbf16>, %arg3: tensor<?x?x?x?x2xbf16>) -> tensor<?x?x1x?x2xbf16> {
  %v1 = attn.dot_product %arg0, %arg1, %arg2 norm [none over queries] scale 5.000000e-01
      : tensor<1x?x?x24xbf16>, tensor<?x?x1x64x24xbf16>, tensor<1x1x?x64x2xbf16> -> tensor<?x?x?x?x?xbf16>
  %v2 = attn.add %v1, %arg3
      : tensor<?x?x?x?x?xbf16>, tensor<?x?x?x?x2xbf16> -> tensor<?x?x1x?x2xbf16>
  return %v2 : tensor<?x?x1x?x2xbf16>
}
