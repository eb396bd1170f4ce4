//===- AttnAttrs.td - Enums and attributes of attn ---------*- tablegen -*-===//

#ifndef ATTN_ATTRS_TD
#define ATTN_ATTRS_TD

include "dialect/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

// Enums are I32EnumAttrs with their specialized attribute (stored as an
// IntegerAttr) so op syntax shows bare keywords: `feature_map relu`.

def Attn_NormKind : I32EnumAttr<"NormKind", "how a normalization step rescales a slice", [
    I32EnumAttrCase<"softmax", 0>,
    I32EnumAttrCase<"sum", 1>,
    I32EnumAttrCase<"count", 2>,
    I32EnumAttrCase<"none", 3>
  ]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_NormAxis : I32EnumAttr<"NormAxis", "which slices of the score matrix a step normalizes", [
    I32EnumAttrCase<"keys", 0>,
    I32EnumAttrCase<"queries", 1>
  ]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_FeatureMap : I32EnumAttr<"FeatureMap", "elementwise feature map applied to queries and keys", [
    I32EnumAttrCase<"identity", 0>,
    I32EnumAttrCase<"elu_plus_one", 1>,
    I32EnumAttrCase<"relu", 2>
  ]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_EfficientVariant : I32EnumAttr<"EfficientVariant", "normalization of efficient attention", [
    I32EnumAttrCase<"softmax", 0>,
    I32EnumAttrCase<"scaling", 1>
  ]> {
  let cppNamespace = "::mlir::attn";
}

def Attn_NormStepAttr : AttrDef<Attn_Dialect, "NormStep"> {
  let mnemonic = "norm";
  let summary = "one step of a normalization list: a kind, an axis and an eps";
  let description = [{
    Normalizes each slice of the score matrix S (n queries x m keys) along
    `axis`: `keys` normalizes every query row over the m keys, `queries`
    every key column over the n queries.

    - `softmax`: exp(s - max) / sum(exp(s - max));
    - `sum`: s / (eps + sum(s));
    - `count`: s / (axis length);
    - `none`: unchanged.

    `eps` is only meaningful (and only printed) for `sum`; it must be >= 0.
    Standalone syntax: `#attn.norm<sum over keys eps 1.000000e-09>`; inside
    an op's list the `#attn.norm<...>` wrapper is dropped.
  }];
  let parameters = (ins
    EnumParameter<Attn_NormKind>:$kind,
    EnumParameter<Attn_NormAxis>:$axis,
    APFloatParameter<"added to the denominator of sum">:$eps
  );
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    double getEpsValue() const { return getEps().convertToDouble(); }
  }];
}

def Attn_NormListAttr : TypedArrayAttrBase<Attn_NormStepAttr,
    "ordered list of normalization steps">;

#endif // ATTN_ATTRS_TD
