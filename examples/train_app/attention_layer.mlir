// The layer examples/train_app trains: linear attention (elu+1 feature map,
// sum over keys) of 256 tokens with learned query, key and value
// projections. The tokens are data, not parameters: {attn.no_grad} keeps
// them out of @attention_layer_grad, whose results are the gradients of
// wq, wk and wv (docs/training.md).
func.func @attention_layer(%x: tensor<256x16xf32> {attn.no_grad},
                           %wq: tensor<16x16xf32> {attn.weight},
                           %wk: tensor<16x16xf32> {attn.weight},
                           %wv: tensor<16x16xf32> {attn.weight})
    -> tensor<256x16xf32> {
  %q = attn.matmul %x, %wq : tensor<256x16xf32>, tensor<16x16xf32> -> tensor<256x16xf32>
  %k = attn.matmul %x, %wk : tensor<256x16xf32>, tensor<16x16xf32> -> tensor<256x16xf32>
  %v = attn.matmul %x, %wv : tensor<256x16xf32>, tensor<16x16xf32> -> tensor<256x16xf32>
  %o = attn.dot_product %q, %k, %v norm [sum over keys] feature_map elu_plus_one
      : tensor<256x16xf32>, tensor<256x16xf32>, tensor<256x16xf32> -> tensor<256x16xf32>
  return %o : tensor<256x16xf32>
}
