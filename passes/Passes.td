//===- Passes.td - attn passes -----------------------------*- tablegen -*-===//

#ifndef ATTN_PASSES_TD
#define ATTN_PASSES_TD

include "mlir/Pass/PassBase.td"

def AttnCostPass : Pass<"attn-cost", "mlir::ModuleOp"> {
  let summary = "Report multiply-accumulates, FLOPs and memory of every attn op";
  let description = [{
    An analysis: the IR is left unchanged. Each attn op gets a remark

        cost: macs = M, flops = F, floats = N

    and each function and the module a total. MACs count the
    multiply-accumulates of contractions (matmuls, attention products,
    bilinear sampling); FLOPs are 2 x MACs plus the elementwise arithmetic
    (normalizations, scales, adds, feature maps); floats are the tensor
    elements the op materializes in its textbook form. Memory follows the
    model of Shen et al. (Table 1): function arguments are counted once,
    except those marked `{attn.weight}` (parameters, reported apart);
    elementwise ops work in place when their input has no other user;
    attention ops count their internal scores (n x m) or context (dk x dv)
    plus their output. See docs/cost-model.md.
  }];
}

#endif // ATTN_PASSES_TD
