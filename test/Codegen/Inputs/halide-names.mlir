// Arguments named as Halide names its own temporaries, a letter and a
// number (test/Codegen/halide-names.test). Efficient softmax attention over
// 514 keys reduces K's column maxima in parallel chunks, where Halide named
// a temporary a1 as well: the kernel failed to compile (an LLVM assertion
// inside Halide).
func.func @efficient(%a0: tensor<3x8xf32>, %a1: tensor<514x8xf32>, %t309: tensor<514x5xf32>) -> tensor<3x5xf32> {
  %o = attn.efficient %a0, %a1, %t309 variant softmax
      : tensor<3x8xf32>, tensor<514x8xf32>, tensor<514x5xf32> -> tensor<3x5xf32>
  return %o : tensor<3x5xf32>
}
