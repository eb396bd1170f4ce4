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
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasCanonicalizer = 0;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_TD
