// Run-time choices on sizes (what --attn-reassociate emits for dynamic
// sizes, written by hand so the branches compute different functions and a
// wrong choice shows in the numbers): scf.if on tensor.dim and index arith,
// tensor.cast.

// Fewer than 10 rows: x * 2, else the exclusive prefix sum over rows.
func.func @choose_by_rows(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c10 = arith.constant 10 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %small = arith.cmpi ult, %n, %c10 : index
  %r = scf.if %small -> (tensor<?x8xf32>) {
    %a = attn.scale %x by 2.0 : tensor<?x8xf32>
    scf.yield %a : tensor<?x8xf32>
  } else {
    %b = attn.prefix_sum %x dim 0 exclusive : tensor<?x8xf32>
    scf.yield %b : tensor<?x8xf32>
  }
  return %r : tensor<?x8xf32>
}

// Every index op the evaluator runs: with n rows and m columns,
// t = (n - m <s 0) ? 2 * max(n, m) + 1 : n, and the choice is t >= 7.
// n = 3, m = 5: t = 11 (then); n = 6, m = 2: t = 6 (else); n = m = 8:
// t = 8 (then). A signed compare of the wrapped n - m is what tells n < m.
func.func @size_arith(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c7 = arith.constant 7 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %m = tensor.dim %x, %c1 : tensor<?x?xf32>
  %d = arith.subi %n, %m : index
  %neg = arith.cmpi slt, %d, %c0 : index
  %big = arith.maxui %n, %m : index
  %twice = arith.muli %big, %c2 : index
  %plus = arith.addi %twice, %c1 : index
  %t = arith.select %neg, %plus, %n : index
  %then = arith.cmpi uge, %t, %c7 : index
  %r = scf.if %then -> (tensor<?x?xf32>) {
    %a = attn.feature_map elu_plus_one %x : tensor<?x?xf32>
    scf.yield %a : tensor<?x?xf32>
  } else {
    %b = attn.normalize softmax %x dim 1 : tensor<?x?xf32>
    scf.yield %b : tensor<?x?xf32>
  }
  return %r : tensor<?x?xf32>
}

// An index result of scf.if feeds a second choice; the tensor branches
// have different static shapes, cast to the dynamic result type.
func.func @nested_choice(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %c5 = arith.constant 5 : index
  %c100 = arith.constant 100 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %le = arith.cmpi ule, %n, %c5 : index
  %limit = scf.if %le -> (index) {
    scf.yield %c100 : index
  } else {
    scf.yield %c0 : index
  }
  %go = arith.cmpi ugt, %limit, %n : index
  %r = scf.if %go -> (tensor<?x4xf32>) {
    %s = attn.reduce_sum %x dim 0 : tensor<?x4xf32> -> tensor<1x4xf32>
    %b = attn.add %x, %s : tensor<?x4xf32>, tensor<1x4xf32> -> tensor<?x4xf32>
    scf.yield %b : tensor<?x4xf32>
  } else {
    %m = attn.mul %x, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    scf.yield %m : tensor<?x4xf32>
  }
  return %r : tensor<?x4xf32>
}

// tensor.cast to a static size and back: a kernel for inputs of 3 rows
// only; other sizes fail at run time with an error code.
func.func @cast_rows(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %s = tensor.cast %x : tensor<?x4xf32> to tensor<3x4xf32>
  %d = attn.div %s, %s eps 1.0 : tensor<3x4xf32>, tensor<3x4xf32> -> tensor<3x4xf32>
  %r = tensor.cast %d : tensor<3x4xf32> to tensor<?x4xf32>
  return %r : tensor<?x4xf32>
}

// An scf.if without else: codegen reports it.
func.func @no_else(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x4xf32>
  %z = arith.cmpi eq, %n, %c0 : index
  scf.if %z {
  }
  return %x : tensor<?x4xf32>
}

// tensor.dim with an index that is not a constant.
func.func @dim_not_constant(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d = tensor.dim %x, %n : tensor<?x?xf32>
  %c1 = arith.constant 1 : index
  %z = arith.cmpi eq, %d, %c1 : index
  %r = scf.if %z -> (tensor<?x?xf32>) {
    scf.yield %x : tensor<?x?xf32>
  } else {
    %s = attn.scale %x by 3.0 : tensor<?x?xf32>
    scf.yield %s : tensor<?x?xf32>
  }
  return %r : tensor<?x?xf32>
}
