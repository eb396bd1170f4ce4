// RUN: attn-run %s --random 60463 --quiet --check --pass-pipeline attn-lower-double-norm,attn-lower-deformable,canonicalize,cse
// EXPECT: ok
func.func @f(%x0: tensor<4x65xf32>, %x1: tensor<17x65xf32>, %x2: tensor<17x5xf32>, %x3: tensor<4x17xf32> {attn.no_grad}, %x4: tensor<1x5xf32>) -> tensor<?x5xf32> {
  %v1 = attn.dot_product %x0, %x1, %x2 mask %x3 norm [softmax over keys, sum over queries] scale -6.250000e-02 causal
      : tensor<4x65xf32>, tensor<17x65xf32>, tensor<17x5xf32>, tensor<4x17xf32> -> tensor<4x5xf32>
  %v2 = attn.add %v1, %x4
      : tensor<4x5xf32>, tensor<1x5xf32> -> tensor<?x5xf32>
  return %v2 : tensor<?x5xf32>
}
