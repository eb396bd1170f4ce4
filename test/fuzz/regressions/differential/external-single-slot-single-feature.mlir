// RUN: attn-run %s --random 28541 --quiet --check --pass-pipeline 'canonicalize,attn-reassociate{force=true},canonicalize,cse'
// EXPECT: ok
func.func @f(%arg0: tensor<3x1xf32>, %arg1: tensor<1x1xf32>, %arg2: tensor<1x16xf32>) -> tensor<3x16xf32> {
  %v1 = attn.external %arg0, %arg1, %arg2
      : tensor<3x1xf32>, tensor<1x1xf32>, tensor<1x16xf32> -> tensor<3x16xf32>
  return %v1 : tensor<3x16xf32>
}
