//===- KernelBuilder.h - The algorithm's builder (internal) -----*- C++ -*-===//
//
// KernelBuilder lowers a func.func, op by op, to a KernelAlgorithm
// (Algorithm.h). Like the schedules (Schedule*.cpp), its lowerings live in
// one file per op family:
//
//   Algorithm.cpp            the driver (run), the op table kLowerings and
//                            the helpers every family uses (shapes,
//                            broadcasting, batched layouts, bind)
//   AlgorithmPrimitives.cpp  matmul, normalize, scale, feature_map,
//                            prefix_sum, causal_mask, add, mul, div,
//                            reduce_sum, floor; of gradients:
//                            feature_map_grad, broadcast, unbroadcast
//   AlgorithmShapes.cpp      tensor reshapes, slices (extract and insert),
//                            pads and casts, constants,
//                            and the sizes and run-time choice (scf.if) of
//                            --attn-reassociate
//   AlgorithmAttention.cpp   dot_product and external (one shared lowering),
//                            attention_grad (its fused backward)
//   AlgorithmEfficient.cpp   efficient
//   AlgorithmSampling.cpp    bilinear_gather, gather_pixels, deformable,
//                            scatter_pixels, deformable_grad (its fused
//                            backward)
//
// To support a new op: write `lowerFoo` in its family's file, declare it
// below with the others of that file, add one row to kLowerings
// (Algorithm.cpp) and schedule its family.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CODEGEN_KERNELBUILDER_H
#define ATTN_CODEGEN_KERNELBUILDER_H

#include "codegen/Algorithm.h"

#include "dialect/AttnOps.h"

#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace mlir::attn::codegen::detail {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Var;

using Index = std::vector<Expr>;

/// The opt-in of an op to bf16 products of computed values
/// (docs/precision.md, "Opt-in: bf16 products"): values it computes in f32
/// (softmax weights, contexts) may be rounded to bf16 before a product, as
/// PyTorch's bf16 kernels do.
constexpr llvm::StringLiteral kAllowBf16Products = "attn.allow_bf16_products";

/// Defines f(index) = value with `vars` in MLIR order.
inline void define(Func f, const std::vector<Var> &vars, Expr value) {
  std::vector<Var> args(vars.rbegin(), vars.rend());
  f(args) = value;
}

inline Index toExprs(const std::vector<Var> &vars) {
  return Index(vars.begin(), vars.end());
}

/// Calls f at `index` (MLIR order).
inline Expr call(Func f, Index index) {
  std::reverse(index.begin(), index.end());
  return f(index);
}

/// Defines an update f(index) = value at an index that holds RVars.
inline void update(Func f, Index index, Expr value) {
  std::reverse(index.begin(), index.end());
  f(index) = value;
}

inline Expr constant(Halide::Type type, double value) {
  return Halide::Internal::make_const(type, value);
}

/// Lowest finite value of `type`: the identity of the masked maximum.
inline Expr lowest(Halide::Type type) {
  return type.bits() == 64 ? constant(type, -std::numeric_limits<double>::max())
                           : constant(type, -std::numeric_limits<float>::max());
}

/// True where x is -inf (an additive mask or causal_mask fill); is_inf is
/// exempt from Halide's fast-math flags.
inline Expr isNegInf(Expr x) { return Halide::is_inf(x) && x < 0; }

/// The sum of a softmax slice as its divisor: only a slice with nothing
/// visible (every entry -inf or hidden) sums to 0, and its entries, all 0,
/// stay 0 (docs/reliability.md).
inline Expr softmaxDivisor(Expr total) {
  return Halide::select(total == 0, constant(total.type(), 1.0), total);
}

/// 1 / softmaxDivisor(total), for a divisor inverted once per slice and
/// multiplied. The zero test is on the bits: as a float compare of a scalar
/// under the fast-math flags, LLVM branched on it with ucomiss without the
/// parity check and took a NaN total for 0, so a NaN slice came out finite
/// (test/Codegen/non-finite-grad.test).
inline Expr softmaxReciprocal(Expr total) {
  Halide::Type bits = Halide::UInt(total.type().bits());
  Expr zero = (Halide::reinterpret(bits, total) << 1) ==
              Halide::Internal::make_zero(bits);
  Expr one = constant(total.type(), 1.0);
  return Halide::select(zero, one, one / total);
}

/// `value`, or x where x is NaN: for the NaN rule (docs/reliability.md)
/// where `value` would lose a NaN x (a clamp, a select on x > 0). The test
/// is on the bits (magnitude above the infinity's): LLVM folds is_nan of a
/// value computed under the no-nans flags to false.
inline Expr keepNaN(Expr x, Expr value) {
  bool wide = x.type().bits() == 64;
  Halide::Type bits = Halide::UInt(wide ? 64 : 32);
  Expr magnitude =
      Halide::reinterpret(bits, x) &
      Halide::Internal::make_const(bits, wide ? uint64_t(0x7fffffffffffffff)
                                              : uint64_t(0x7fffffff));
  Expr infinity = Halide::Internal::make_const(
      bits, wide ? uint64_t(0x7ff0000000000000) : uint64_t(0x7f800000));
  return Halide::select(magnitude > infinity, x, value);
}

/// exp of a softmax's shifted entry (<= 0, or NaN): f32 softmaxExp, as the
/// fused kernels' softmaxes (Halide's exp_f32 took about 10 more vector
/// instructions per vector: efficient attention's gradient spent 15% of its
/// time in its row softmax over 32 features); elsewhere Halide's exp, which
/// turns NaN into 0, with the NaN kept (the NaN rule).
inline Expr softmaxWeightExp(Expr shifted) {
  return shifted.type() == Halide::Float(32)
             ? softmaxExp(shifted)
             : keepNaN(shifted, Halide::exp(shifted));
}

/// A saved log-sum-exp whose +inf (a slice with nothing visible) becomes
/// the largest float, chosen between bit patterns (an FP select of inf is
/// poison under the no-infs flags): exp(x - lse) is then 0 there.
inline Expr finiteSavedLse(Expr lse) {
  Halide::Type type = lse.type(), bits = Halide::UInt(type.bits());
  Expr largest = type.bits() == 64
                     ? constant(type, std::numeric_limits<double>::max())
                     : constant(type, std::numeric_limits<float>::max());
  return Halide::reinterpret(type,
                             Halide::select(Halide::is_inf(lse),
                                            Halide::reinterpret(bits, largest),
                                            Halide::reinterpret(bits, lse)));
}

class KernelBuilder {
public:
  KernelBuilder(func::FuncOp func, ArrayRef<std::string> argNames,
                const AlgorithmOptions &options)
      : func(func), argNames(argNames), options(options) {}
  FailureOr<KernelAlgorithm> run();

  // Lowerings, one per op (see kLowerings), by the file that defines them.
  // AlgorithmPrimitives.cpp
  LogicalResult lowerMatmul(Operation *op);
  LogicalResult lowerNormalize(Operation *op);
  LogicalResult lowerSoftmaxFromLse(Operation *op);
  LogicalResult lowerScale(Operation *op);
  LogicalResult lowerFeatureMap(Operation *op);
  LogicalResult lowerPrefixSum(Operation *op);
  LogicalResult lowerCausalMask(Operation *op);
  LogicalResult lowerAdd(Operation *op);
  LogicalResult lowerMul(Operation *op);
  LogicalResult lowerDiv(Operation *op);
  LogicalResult lowerReduceSum(Operation *op);
  LogicalResult lowerFloor(Operation *op);
  LogicalResult lowerFeatureMapGrad(Operation *op);
  LogicalResult lowerBroadcast(Operation *op);
  LogicalResult lowerUnbroadcast(Operation *op);
  // AlgorithmShapes.cpp
  LogicalResult lowerExpandShape(Operation *op);
  LogicalResult lowerCollapseShape(Operation *op);
  LogicalResult lowerConstant(Operation *op);
  LogicalResult lowerCast(Operation *op);
  LogicalResult lowerFloatCast(Operation *op);
  LogicalResult lowerExtractSlice(Operation *op);
  LogicalResult lowerInsertSlice(Operation *op);
  LogicalResult lowerPad(Operation *op);
  // Sizes: index and i1 values become scalar Exprs (see `scalars`).
  LogicalResult lowerDim(Operation *op);
  LogicalResult lowerIndexArith(Operation *op);
  LogicalResult lowerCmpI(Operation *op);
  LogicalResult lowerSelect(Operation *op);
  LogicalResult lowerIf(Operation *op);
  // AlgorithmAttention.cpp
  LogicalResult lowerDotProduct(Operation *op);
  LogicalResult lowerExternal(Operation *op);
  LogicalResult lowerAttentionGrad(Operation *op);
  // AlgorithmEfficient.cpp
  LogicalResult lowerEfficient(Operation *op);
  // AlgorithmSampling.cpp
  LogicalResult lowerBilinearGather(Operation *op);
  LogicalResult lowerGatherPixels(Operation *op);
  LogicalResult lowerDeformable(Operation *op);
  LogicalResult lowerScatterPixels(Operation *op);
  LogicalResult lowerDeformableGrad(Operation *op);

private:
  // Shared by every family (Algorithm.cpp).
  /// The layout of a batched result (lead..., rows, cols): `lead`
  /// broadcasts the operands' leading dims and is indexed by batch Vars b0,
  /// b1, ... placed before each Func's own trailing Vars.
  struct BatchedLayout {
    std::vector<Expr> lead;
    std::vector<Var> batchVars;
    /// Result extents (lead..., rows, cols).
    std::vector<Expr> shape;
    /// The batch Vars followed by `tail`, to define a Func.
    std::vector<Var> vars(std::initializer_list<Var> tail) const;
    /// The batch index followed by `tail`, to call a Func.
    Index index(std::initializer_list<Expr> tail) const;
    /// Element of operand `t` at the broadcast batch index followed by
    /// `tail` (its own last two dims).
    Expr operand(const TensorFunc &t, const Index &tail) const;
  };
  /// Broadcasts `operands`' leading dims (all but the last two) and checks
  /// the op's result type against (lead..., rows, cols).
  FailureOr<BatchedLayout> batchedLayout(Operation *op,
                                         ArrayRef<const TensorFunc *> operands,
                                         Expr rows, Expr cols,
                                         const std::string &name);
  /// Attention over Q (..., n, dk), K (..., m, dk), V (..., m, dv) with an
  /// optional mask (..., n, m); the result is (lead..., n, dv).
  struct AttentionLayout : BatchedLayout {
    Expr n, dk, m, dv;
  };
  /// Checks the dims that q, k, v (and `mask`) share, then as batchedLayout.
  FailureOr<AttentionLayout> attentionLayout(Operation *op, const TensorFunc &q,
                                             const TensorFunc &k,
                                             const TensorFunc &v,
                                             const TensorFunc *mask,
                                             const std::string &name);
  /// Looks `op` up in kLowerings and lowers it.
  LogicalResult lowerOp(Operation &op);

  /// A copy (a Func handle, the shape's Exprs): binding a result inserts
  /// into `values`, which may move its entries, so a reference held across
  /// bind() dangled (scf.if of bf16 gradients crashed inside Halide).
  /// `const TensorFunc &x = get(v)` keeps the copy alive.
  TensorFunc get(Value value) const { return values.find(value)->second; }
  std::string freshName(StringRef base) {
    return (base + "_" + llvm::Twine(counters[base.str()]++)).str();
  }
  /// "matmul_0" for attn.matmul, "expand_shape_0" for tensor.expand_shape.
  std::string opFuncName(Operation *op) {
    return freshName(op->getName().stripDialect());
  }
  std::vector<Var> makeVars(size_t rank, StringRef prefix = "d") {
    std::vector<Var> vars;
    for (size_t i = 0; i < rank; ++i)
      vars.emplace_back((prefix + llvm::Twine(i)).str());
    return vars;
  }
  FailureOr<Halide::Type> elementType(Operation *op, Type type);
  /// Extents of `type`: static dims as constants, dynamic dims from
  /// `computed` (which must have the same rank).
  FailureOr<std::vector<Expr>> extents(Operation *op, RankedTensorType type,
                                       const std::vector<Expr> &computed);
  /// Requires a == b at run time unless both are constants (the verifier
  /// checked those).
  void requireEqual(Expr a, Expr b, const std::string &what);
  /// Requires `from` == 1 or `from` == `to` at run time (a dim that
  /// broadcasts), unless both are constants.
  void requireBroadcastable(Expr from, Expr to, const std::string &what);
  /// numpy broadcast of several leading shapes; result extents, with
  /// requirements for dynamic dims (1 or the result extent at run time:
  /// a dynamic 1 stretches, as in the reference runtime).
  std::vector<Expr> broadcastShape(const std::vector<std::vector<Expr>> &shapes,
                                   const std::string &what);
  /// Index of an operand with leading shape `shape` for result index `index`
  /// (both right-aligned; stretched dims read index 0, dynamic ones
  /// min(index, extent - 1), which is 0 when they are 1).
  static Index broadcastIndex(const std::vector<Expr> &shape,
                              const std::vector<Expr> &resultShape,
                              const Index &index);
  /// The index in algorithm.ops of the op that computes `value`
  /// (algorithm.ops.size() if none).
  size_t opIndex(Value value);
  /// Marks a returned pointwise op as the epilogue of a product.
  void markEpilogue(Value returned);
  void markRounding(Value returned);
  /// Marks products that read, row by row, an input of the epilogue
  /// `epilogueOp` (algorithm.ops[epilogue]) and could share its tasks.
  void markRowCompanions(Operation *epilogueOp, size_t epilogue,
                         ArrayRef<Value> epilogueReads,
                         const llvm::SmallPtrSetImpl<Operation *> &tiles);
  /// Marks column sums that can share a chunked product's tasks.
  void markSharedColumnSums();
  /// Records the op's result.
  void bind(Operation *op, Family family, TensorFunc result,
            std::map<std::string, Func> stages = {},
            std::map<std::string, RDom> domains = {},
            std::map<std::string, int64_t> info = {});
  Expr featureMapExpr(FeatureMap map, Expr x);
  /// The stored bf16 tensor of `value` when `value` is its widening (the
  /// arith.extf that attn-widen-to-f32 puts before an op), else none:
  /// products of stored bf16 values are exact in f32 (vdpbf16ps).
  std::optional<TensorFunc> storedBf16(Value value);

  // Used by one family: AlgorithmPrimitives.cpp.
  /// Whether attn.matmul `op` reduces its `inner` dim in bf16 pairs: its
  /// operands are both stored bf16, or it opts in (kAllowBf16Products), on
  /// a target with pairs, with an even static `inner` and more than one
  /// column; else false, with the reason in `whyNot`.
  bool bf16ProductPairs(Operation *op, const Expr &inner, const Expr &cols,
                        std::string &whyNot);
  /// Elementwise `combine(lhs, rhs)` with numpy broadcasting (attn.add,
  /// attn.mul, attn.div), named `name` (default: opFuncName(op));
  /// `rhsOverride`, if given, is read in place of rhsValue's Func (the same
  /// shape: attn.div's per-row inverses).
  LogicalResult
  lowerBroadcastBinary(Operation *op, Value lhsValue, Value rhsValue,
                       const std::function<Expr(Expr, Expr)> &combine,
                       const TensorFunc *rhsOverride = nullptr,
                       const std::string &name = "");

  // Used by one family: AlgorithmShapes.cpp.
  /// The scalar Expr of an index or i1 value, or an error at `user`.
  FailureOr<Expr> scalar(Operation *user, Value value);
  /// A static or run-time size of a shape op as a UInt(64) Expr, as
  /// `scalars` holds index values (after indexOperand has checked it).
  Expr indexValue(OpFoldResult value);
  /// A static or run-time offset, size, pad or output_shape entry of a shape
  /// op as an Int32 Expr; a run-time one is required to fit a Halide dim.
  FailureOr<Expr> indexOperand(Operation *op, OpFoldResult value,
                               const std::string &what);
  /// indexOperand of each of `values`.
  FailureOr<std::vector<Expr>> indexOperands(Operation *op,
                                             ArrayRef<OpFoldResult> values,
                                             const std::string &what);
  /// The block of a tensor.extract_slice or insert_slice (static strides),
  /// with requirements that it lies inside `whole` (what it `access`es).
  struct SliceWindow {
    Index offsets, sizes;
    std::vector<int32_t> strides;
  };
  FailureOr<SliceWindow> sliceWindow(OffsetSizeAndStrideOpInterface op,
                                     const std::vector<Expr> &whole,
                                     const std::string &name, StringRef access);

  // Used by one family: AlgorithmAttention.cpp.
  /// Description of a dot-product attention for the shared lowering of
  /// attn.dot_product and attn.external.
  struct DotProductSpec {
    Value query, key, value, mask;
    std::vector<std::tuple<NormKind, NormAxis, double>> steps;
    double scale = 1.0;
    FeatureMap featureMap = FeatureMap::identity;
    bool causal = false;
    /// The op's second result is the row log-sum-exp (`with_lse`).
    bool lse = false;
  };
  LogicalResult lowerDotProductSpec(Operation *op, const DotProductSpec &spec);
  /// Defines the attention's `result` Func over (batch..., i, e) as `out`
  /// and binds the op; with `lse` defined (a row's log-sum-exp over (i)),
  /// `result` is the Tuple (out, lse) and the op's two results its
  /// components (Elementwise slices). Returns the op's index in
  /// algorithm.ops.
  FailureOr<size_t> bindAttention(Operation *op, Family family, Func result,
                                  const AttentionLayout &batch, Var i, Var e,
                                  Expr out, Expr lse,
                                  std::map<std::string, Func> stages,
                                  std::map<std::string, RDom> domains,
                                  std::map<std::string, int64_t> info);
  /// max + log(total), +inf where total is 0 (a row with nothing visible,
  /// so exp(S - lse) is 0 there).
  static Expr logSumExp(Expr max, Expr total);
  /// True where the additive mask of `spec` is -inf at (row, col). Tested on
  /// the mask itself, not on the scores: scores + (-inf) is an add under
  /// the no-infs fast-math flags, whose is_inf LLVM may fold to false.
  Expr maskHides(const AttentionLayout &batch, const DotProductSpec &spec,
                 Expr row, Expr col);
  /// The weights and output of a softmax over keys, split into key ranges of
  /// `split` (AlgorithmOptions::keySplit, or keyPart with `fewRows`), after
  /// `stages` (query, dot, scores, and keyT unless `fewRows`) are defined.
  LogicalResult
  lowerKeySplitSoftmax(Operation *op, const std::string &name,
                       const AttentionLayout &batch, const DotProductSpec &spec,
                       const TensorFunc &q, const TensorFunc &k,
                       const TensorFunc &v, std::map<std::string, Func> stages,
                       std::map<std::string, RDom> domains, int64_t split,
                       bool fewRows, const std::string &bf16WeightsUnused);

  // Used by one family: AlgorithmSampling.cpp.
  /// The levels of a per-sample gather (bilinear_gather, gather_pixels):
  /// checks them and that value (N, Lv, M, D) and the samples
  /// (N, Lq, M, L, P, 2) agree; the result shape (N, Lq, M, L, P, D) and
  /// level `l`'s height, width and first row as select chains on `l`.
  struct SampleLevels {
    std::vector<Expr> shape;
    Expr height, width, start;
  };
  FailureOr<SampleLevels> sampleLevels(Operation *op,
                                       ArrayRef<int64_t> flatLevels,
                                       const TensorFunc &value,
                                       const TensorFunc &samples,
                                       const std::string &name, Var l);
  /// Bilinear sample of `value` (N, Lv, M, D) at normalized (x, y) of a
  /// level with the given start row and size (zeros padding).
  Expr bilinearSample(const TensorFunc &value, Expr n, Expr h, Expr d,
                      Expr start, Expr height, Expr width, Expr x, Expr y,
                      bool alignCorners);
  /// Corner (cx, cy) (each 0 or 1, may be symbolic) of the bilinear sample
  /// at normalized (x, y) of a level: its value row, clamped into [0, Lv)
  /// so every load is in bounds, and its bilinear weight, 0 when the corner
  /// is outside the level or the location is not finite (`valid` false).
  /// An invalid corner must add exactly 0 (not 0 times its clamped row,
  /// which may hold NaN or inf): consumers select or skip on `valid`.
  struct BilinearCorner {
    Expr row, weight, valid;
  };
  BilinearCorner bilinearCorner(const TensorFunc &value, Expr start,
                                Expr height, Expr width, Expr x, Expr y,
                                bool alignCorners, Expr cx, Expr cy);

  func::FuncOp func;
  ArrayRef<std::string> argNames;
  AlgorithmOptions options;
  KernelAlgorithm algorithm;
  llvm::DenseMap<Value, TensorFunc> values;
  /// index values as UInt(64) Exprs (arith on index wraps at 64 bits), i1
  /// values as Bool Exprs; all computed from tensor sizes.
  llvm::DenseMap<Value, Expr> scalars;
  std::map<std::string, int> counters;
  /// The ops of each group of loop nests that share row tasks (an
  /// epilogue, its tiles and its companion; markRowCompanions), so that a
  /// new group never closes a cycle of groups that feed each other.
  std::vector<llvm::SmallVector<Operation *, 8>> rowTaskGroups;
};

} // namespace mlir::attn::codegen::detail

#endif // ATTN_CODEGEN_KERNELBUILDER_H
