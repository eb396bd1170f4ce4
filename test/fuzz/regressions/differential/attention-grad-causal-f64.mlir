// RUN: attn-run %s --random 21333 --quiet --check
// EXPECT: ok
func.func @f(%a0: tensor<2x9x31xf64>, %a1: tensor<32x31xf64>, %a2: tensor<32x5xf64>, %a3: tensor<2x9x5xf64>) -> (tensor<2x9x31xf64>, tensor<2x32x31xf64>, tensor<2x32x5xf64>) {
  %v1_0, %v1_1, %v1_2 = attn.attention_grad %a0, %a1, %a2, %a3 scale 1.250000e-01 causal
      : tensor<2x9x31xf64>, tensor<32x31xf64>, tensor<32x5xf64>, tensor<2x9x5xf64>
      -> tensor<2x9x31xf64>, tensor<2x32x31xf64>, tensor<2x32x5xf64>
  return %v1_0, %v1_1, %v1_2 : tensor<2x9x31xf64>, tensor<2x32x31xf64>, tensor<2x32x5xf64>
}
