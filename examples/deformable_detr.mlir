// Multi-scale deformable attention, encoder sampling step (Zhu et al.,
// "Deformable DETR: Deformable Transformers for End-to-End Object
// Detection", ICLR 2021, Eq. 3; MSDeformAttn).
//
// Each query attends to only P = 4 sampled points per head and level,
// around a reference point, instead of to all positions:
//   out[q, h] = sum_l sum_p  w[q, h, l, p] * bilinear(V_l[h], loc[q, h, l, p])
// value: the flattened multi-scale feature maps, levels stored one after the
//   other row-major: 16x16 + 8x8 + 4x4 + 2x2 = 340 positions, M = 4 heads of
//   D = 8 channels (d_model = 32);
// sampling_locations: (x, y) in [0, 1] per (query, head, level, point);
// attention_weights: softmax-normalized over the L x P = 16 samples of each
//   query and head (done by the caller, as in MSDeformAttn);
// in the encoder every pixel is a query: Lq = 340. Output (N, Lq, M*D).
func.func @deformable_detr(%value: tensor<1x340x4x8xf32>,
                           %sampling_locations: tensor<1x340x4x4x4x2xf32>,
                           %attention_weights: tensor<1x340x4x4x4xf32>) -> tensor<1x340x32xf32> {
  %out = attn.deformable %value, %sampling_locations, %attention_weights
      levels [16x16, 8x8, 4x4, 2x2]
      : tensor<1x340x4x8xf32>, tensor<1x340x4x4x4x2xf32>, tensor<1x340x4x4x4xf32>
      -> tensor<1x340x32xf32>
  return %out : tensor<1x340x32xf32>
}
