// RUN: attn-run %s --func complex_argument --random 407 --dynamic-size 3 --check --quiet --max-memory 1G
// attn-run's memory guard asked a complex<f32> element for its bit width
// and crashed (segfault; found by the spec fuzzer, mutating the attn-cost
// test of the same crash). Now the guard counts it at 8 bytes and codegen
// rejects the argument with an error.
func.func @complex_argument(%c: tensor<65536x8192xcomplex<f32>>) {
  return
}
