// RUN: attn-run %s --quiet --input x0=%I/x0.npy --input x1=%I/x1.npy --input x2=%I/x2.npy --input x3=%I/x3.npy --input x4=%I/x4.npy --check --grad --random 1
// EXPECT: ok
func.func @f(%x0: tensor<?x24x13xf64>, %x1: tensor<?x16x13xf64>, %x2: tensor<?x16x?xf64>, %x3: tensor<1x24x16xf64>, %x4: tensor<1x1x?xf64>) -> (tensor<33x24x?xf64>, tensor<33x24x33xf64>) {
  %v1 = attn.dot_product %x0, %x1, %x2 mask %x3 norm [none over keys] scale 2.000000e+00 feature_map identity causal
      : tensor<?x24x13xf64>, tensor<?x16x13xf64>, tensor<?x16x?xf64>, tensor<1x24x16xf64> -> tensor<33x24x?xf64>
  %v2 = attn.mul %v1, %x4
      : tensor<33x24x?xf64>, tensor<1x1x?xf64> -> tensor<33x24x33xf64>
  return %v1, %v2 : tensor<33x24x?xf64>, tensor<33x24x33xf64>
}
