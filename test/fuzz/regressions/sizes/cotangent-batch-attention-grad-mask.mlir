// RUN: attn-run %s --quiet --input arg0=%I/arg0.npy --input arg1=%I/arg1.npy --input arg2=%I/arg2.npy --input arg3=%I/arg3.npy --input arg4=%I/arg4.npy
// EXPECT: error
func.func @f(%arg0: tensor<?x48x33xf32>, %arg1: tensor<?x3x33xf32>, %arg2: tensor<?x3x7xf32>, %arg3: tensor<?x48x3xf32> {attn.no_grad}, %arg4: tensor<?x48x7xf32>) -> (tensor<?x48x33xf32>, tensor<?x3x33xf32>, tensor<?x3x7xf32>) {
  %v1_0, %v1_1, %v1_2 = attn.attention_grad %arg0, %arg1, %arg2, %arg4 mask %arg3
      : tensor<?x48x33xf32>, tensor<?x3x33xf32>, tensor<?x3x7xf32>, tensor<?x48x7xf32>, tensor<?x48x3xf32>
      -> tensor<?x48x33xf32>, tensor<?x3x33xf32>, tensor<?x3x7xf32>
  return %v1_0, %v1_1, %v1_2 : tensor<?x48x33xf32>, tensor<?x3x33xf32>, tensor<?x3x7xf32>
}
