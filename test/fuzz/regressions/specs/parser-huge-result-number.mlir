// RUN: attn-opt %s
// A use of result #2147483648 of a value not yet defined: the MLIR parser
// (upstream, mlir-opt too) makes room for that many forward references and
// aborts with "LLVM ERROR: out of memory".
func.func @f() -> tensor<2xf32> {
  return %0#2147483648 : tensor<2xf32>
}
