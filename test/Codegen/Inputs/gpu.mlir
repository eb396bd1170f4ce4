// Kernels that take the less common paths of the GPU schedules
// (codegen/ScheduleGpu.cpp); see gpu-opencl-paths.test.

// Dynamic key count: the block's scores cannot be sized at compile time, so
// they go to a global scratch per launch of queriesPerLaunch (2048) queries;
// with n = 2100 there are two launches, the second one partly guarded.
func.func @dynamic_attention(%q: tensor<?x32xf32>, %k: tensor<?x32xf32>,
                             %v: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.125
      : tensor<?x32xf32>, tensor<?x32xf32>, tensor<?x16xf32> -> tensor<?x16xf32>
  return %o : tensor<?x16xf32>
}

// 4096 keys: a row of scores is 16 KiB, so a block holds 2 queries (with
// their statistics) in its 48 KiB of shared memory, not the default 16.
func.func @many_keys(%q: tensor<40x16xf32>, %k: tensor<4096x16xf32>,
                     %v: tensor<4096x8xf32>) -> tensor<40x8xf32> {
  %o = attn.dot_product %q, %k, %v norm [softmax over keys] causal
      : tensor<40x16xf32>, tensor<4096x16xf32>, tensor<4096x8xf32> -> tensor<40x8xf32>
  return %o : tensor<40x8xf32>
}

// A softmax over 1000 positions (dim 0): its statistics are reductions over
// positions, split into chunks of 256 with rfactor and merged.
func.func @long_column_softmax(%x: tensor<1000x8xf32>) -> tensor<1000x8xf32> {
  %o = attn.normalize softmax %x dim 0 : tensor<1000x8xf32>
  return %o : tensor<1000x8xf32>
}
