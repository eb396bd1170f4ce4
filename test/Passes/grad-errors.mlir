// RUN: attn-opt %s -split-input-file --attn-grad -verify-diagnostics
//
// What --attn-grad refuses, each with an error at the cause.

// expected-error @below {{--attn-grad: @f_grad already exists (rename it, or mark @f as a gradient with `attn.gradient_of`)}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
func.func @f_grad(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{--attn-grad: argument of type 'index' is not a ranked float tensor}}
func.func @index_argument(%n: index, %x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// expected-error @below {{--attn-grad: result of type 'index' is not a ranked float tensor}}
func.func @index_result(%x: tensor<?xf32>) -> index {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  return %n : index
}

// -----

// --attn-reassociate's run-time choice has no adjoint: differentiate first.
func.func @region_op(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c = arith.constant true
  // expected-error @below {{--attn-grad has no adjoint rule for 'scf.if' (run --attn-grad before --attn-reassociate)}}
  %r = scf.if %c -> tensor<4x4xf32> {
    scf.yield %x : tensor<4x4xf32>
  } else {
    scf.yield %y : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}

// -----

// bilinear_gather with dynamic sizes: its gradient is its primitive form,
// which needs static shapes (attn.deformable has a fused rule instead).
func.func @dynamic_bilinear(%value: tensor<1x30x2x4xf32>, %loc: tensor<1x?x2x2x2x2xf32>) -> tensor<1x?x2x2x2x4xf32> {
  // expected-error @below {{--attn-grad has no adjoint rule for 'attn.bilinear_gather' with dynamic sizes (its primitive form needs static shapes)}}
  %o = attn.bilinear_gather %value, %loc levels [4x5, 2x5]
      : tensor<1x30x2x4xf32>, tensor<1x?x2x2x2x2xf32> -> tensor<1x?x2x2x2x4xf32>
  return %o : tensor<1x?x2x2x2x4xf32>
}

// -----

// `funcs` names a function the module does not define.
// RUN: not attn-opt %s -split-input-file --attn-grad=funcs=nope 2>&1 | FileCheck %s --check-prefix=FUNCS
// FUNCS: error: --attn-grad: funcs names @nope, which the module does not define
func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// The row log-sum-exp of attn.dot_product (with_lse) has no adjoint rule: a
// function that returns it is not differentiated.
func.func @returns_lse(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<16xf32>) {
  // expected-error @+1 {{--attn-grad does not differentiate the row log-sum-exp of attn.dot_product (`with_lse`): it reaches a result of the function}}
  %o, %lse = attn.dot_product %q, %k, %v norm [softmax over keys] with_lse
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x4xf32> -> tensor<16x4xf32>, tensor<16xf32>
  return %o, %lse : tensor<16x4xf32>, tensor<16xf32>
}

// -----

// Nor the key log-sum-exp of attn.efficient (with_context).
func.func @returns_key_lse(%q: tensor<16x8xf32>, %k: tensor<16x8xf32>, %v: tensor<16x4xf32>) -> (tensor<16x4xf32>, tensor<1x8xf32>) {
  // expected-error @+1 {{--attn-grad does not differentiate the key log-sum-exp of attn.efficient (`with_context`): it reaches a result of the function}}
  %o, %c, %lse = attn.efficient %q, %k, %v variant softmax with_context
      : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x4xf32> -> tensor<16x4xf32>, tensor<8x4xf32>, tensor<1x8xf32>
  return %o, %lse : tensor<16x4xf32>, tensor<1x8xf32>
}
