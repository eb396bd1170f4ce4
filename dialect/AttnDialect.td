//===- AttnDialect.td - The attn dialect -------------------*- tablegen -*-===//

#ifndef ATTN_DIALECT_TD
#define ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Attention specs: high-level attention ops and the primitives they lower to";
  let description = [{
    The `attn` dialect describes attention mechanisms on ranked tensors whose
    last two dims are (positions, features) and whose leading dims are batch
    and heads. High-level ops (`attn.dot_product`, `attn.efficient`,
    `attn.external`, `attn.deformable`) carry the semantics users write;
    primitive ops (`attn.matmul`, `attn.normalize`, ...) are what the
    lowering passes produce and what code generation maps one-to-one to
    Halide Funcs. Every op has a reference implementation in `runtime/`.

    Element types: f32, f64, and bf16 and f16 as storage types. Products
    accumulate in f32, softmax statistics and normalization sums are f32,
    and a result is rounded to its declared element type once (to nearest,
    ties to even). An op's float operands share one element type; the
    result of an op with an inferred type may declare another of bf16, f16
    and f32 (bf16 Q/K/V with an f32 result), never f64 with another type.
    `--attn-widen-to-f32` makes the rule explicit (docs/precision.md).

    NaN and Inf (docs/reliability.md): arithmetic is IEEE (a NaN propagates,
    0 * inf and inf - inf are NaN) except where an op says otherwise. A
    softmax slice (`attn.normalize softmax`, a softmax step, `attn.efficient`
    softmax) is all NaN if a visible entry is NaN or +inf (exp(inf - inf)),
    gives -inf entries weight 0, and is all 0 if no entry is visible or every
    visible one is -inf. Entries a causal mask hides take part in nothing.
    The kernels give NaN, +inf and -inf where the reference runtime does.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasCanonicalizer = 0;
  // Canonicalization may reshape with tensor ops (AttnFolds.cpp).
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_TD
