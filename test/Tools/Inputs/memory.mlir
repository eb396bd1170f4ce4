// Specs for attn-run-memory.test.

// 1024 x 1024 x 1024 x 64 = 2^36 elements per tensor: 512 GiB as attn-run's
// doubles plus 256 GiB as an f32 kernel buffer, within the address space
// (2^47 bytes) but beyond any test machine's memory.
func.func @beyond_memory(%q: tensor<1024x1024x1024x64xf32>, %k: tensor<1024x1024x1024x64xf32>, %v: tensor<1024x1024x1024x64xf32>) -> tensor<1024x1024x1024x64xf32> {
  %o = attn.efficient %q, %k, %v variant softmax : tensor<1024x1024x1024x64xf32>, tensor<1024x1024x1024x64xf32>, tensor<1024x1024x1024x64xf32> -> tensor<1024x1024x1024x64xf32>
  return %o : tensor<1024x1024x1024x64xf32>
}

// 64 x 64 f32 tensors: 32 KiB each as doubles, 16 KiB as kernel buffers;
// the reference holds its scores (64 x 64) and result too.
func.func @small(%q: tensor<64x64xf32>, %k: tensor<64x64xf32>, %v: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %s = attn.matmul %q, %k transpose_rhs : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  %o = attn.matmul %s, %v : tensor<64x64xf32>, tensor<64x64xf32> -> tensor<64x64xf32>
  return %o : tensor<64x64xf32>
}

// A dynamic dim: counted only when --dynamic-size gives it a size.
func.func @dynamic(%x: tensor<?x1024xf32>) -> tensor<?x1024xf32> {
  %o = attn.scale %x by 2.0 : tensor<?x1024xf32>
  return %o : tensor<?x1024xf32>
}
