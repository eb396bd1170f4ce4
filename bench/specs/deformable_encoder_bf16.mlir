// Benchmark kernel deformable_encoder_bf16 (bench/kernels.py renders this file).
// Multi-scale deformable attention (Deformable DETR), Lq = 19947, M = 8, L = 4, P = 4, D = 32:
//   out[q, h] = sum_l sum_p w[q, h, l, p] * bilinear(V_l[h], loc[q, h, l, p])
// Every tensor bf16 (storage; the arithmetic is f32, docs/precision.md).
func.func @deformable_encoder_bf16(%value: tensor<1x19947x8x32xbf16>, %sampling_locations: tensor<1x19947x8x4x4x2xbf16>, %attention_weights: tensor<1x19947x8x4x4xbf16>) -> tensor<1x19947x256xbf16> {
  %o = attn.deformable %value, %sampling_locations, %attention_weights levels [100x150, 50x75, 25x38, 13x19]
      : tensor<1x19947x8x32xbf16>, tensor<1x19947x8x4x4x2xbf16>, tensor<1x19947x8x4x4xbf16> -> tensor<1x19947x256xbf16>
  return %o : tensor<1x19947x256xbf16>
}
