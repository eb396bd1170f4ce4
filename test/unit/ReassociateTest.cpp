//===- ReassociateTest.cpp - --attn-reassociate, checked by numbers -------===//
//
// The MAC formula the pass evaluates at run time for dynamic sizes
// (linearAttentionMacs in CostModel.h) must equal the cost model's count of
// the ops the rewrite emits, so the static and dynamic decisions agree. And
// every exact rewrite must compute the same function: IR before and after,
// evaluated by the reference runtime on signed random inputs, within 1e-12
// relative (all arithmetic is double).
//
//===----------------------------------------------------------------------===//

#include "api/ReferenceEvaluator.h"
#include "dialect/AttnOps.h"
#include "passes/CostModel.h"
#include "passes/Passes.h"
#include "runtime/Reference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::api;
namespace rt = ::attn::runtime;

namespace {

class ReassociateTest : public ::testing::Test {
protected:
  ReassociateTest() {
    context.loadDialect<AttnDialect, func::FuncDialect, arith::ArithDialect,
                        scf::SCFDialect, tensor::TensorDialect>();
  }

  OwningOpRef<ModuleOp> parse(const std::string &ir) {
    return parseSourceString<ModuleOp>(ir, &context);
  }

  OwningOpRef<ModuleOp> reassociate(ModuleOp module,
                                    AttnReassociatePassOptions options) {
    OwningOpRef<ModuleOp> copy = module.clone();
    PassManager pm(&context);
    pm.addPass(createAttnReassociatePass(options));
    EXPECT_TRUE(succeeded(pm.run(*copy)));
    return copy;
  }

  /// `ir` parsed, and after --attn-reassociate=force (every rewritable op,
  /// whatever the cost); null modules when `ir` does not parse.
  std::pair<OwningOpRef<ModuleOp>, OwningOpRef<ModuleOp>>
  parseAndForce(const std::string &ir) {
    OwningOpRef<ModuleOp> module = parse(ir);
    if (!module)
      return {};
    AttnReassociatePassOptions options;
    options.force = true;
    OwningOpRef<ModuleOp> rewritten = reassociate(*module, options);
    return {std::move(module), std::move(rewritten)};
  }

  /// Evaluates the only function on signed inputs from `seed`.
  rt::Tensor evaluate(ModuleOp module, uint64_t seed) {
    auto func = *module.getOps<func::FuncOp>().begin();
    std::vector<rt::Tensor> inputs;
    for (auto [index, type] : llvm::enumerate(func.getArgumentTypes())) {
      ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
      rt::Tensor input(std::vector<int64_t>(shape.begin(), shape.end()));
      rt::fillUniform(input, seed + index, -1.0, 1.0);
      inputs.push_back(std::move(input));
    }
    SmallVector<rt::Tensor> results;
    EXPECT_TRUE(succeeded(evaluateWithReference(func, inputs, results)));
    return results.empty() ? rt::Tensor() : results.front();
  }

  void expectSameFunction(ModuleOp before, ModuleOp after) {
    rt::Tensor expected = evaluate(before, 41), actual = evaluate(after, 41);
    ASSERT_EQ(expected.shape, actual.shape);
    double scale = 0.0;
    for (double value : expected.data)
      scale = std::max(scale, std::fabs(value));
    for (size_t i = 0; i < expected.data.size(); ++i)
      EXPECT_NEAR(actual.data[i], expected.data[i], 1e-12 * scale)
          << "at flat index " << i;
  }

  static uint64_t totalMacs(Operation *root) {
    uint64_t macs = 0;
    root->walk([&](Operation *op) {
      OpCost cost;
      if (estimateOpCost(op, cost) == CostStatus::Known)
        macs += cost.macs;
    });
    return macs;
  }

  static bool hasDotProduct(ModuleOp module) {
    bool found = false;
    module.walk([&](DotProductAttentionOp) { found = true; });
    return found;
  }

  MLIRContext context;
};

std::string spec(const std::string &q, const std::string &k,
                 const std::string &v, const std::string &o,
                 const std::string &attributes) {
  return "func.func @f(%q: tensor<" + q + "xf32>, %k: tensor<" + k +
         "xf32>, %v: tensor<" + v + "xf32>) -> tensor<" + o +
         "xf32> {\n  %o = attn.dot_product %q, %k, %v " + attributes +
         " : tensor<" + q + "xf32>, tensor<" + k + "xf32>, tensor<" + v +
         "xf32> -> tensor<" + o + "xf32>\n  return %o : tensor<" + o +
         "xf32>\n}\n";
}

struct FormulaCase {
  const char *q, *k, *v, *o, *attributes;
  uint64_t contextBatch, batch, n, m, dk, dv;
  bool rowSums;
};

TEST_F(ReassociateTest, LinearFormulaMatchesTheEmittedOps) {
  const FormulaCase cases[] = {
      {"64x8", "48x8", "48x4", "64x4", "norm [count over keys]", 1, 1, 64, 48,
       8, 4, false},
      {"2x3x64x8", "2x3x32x8", "2x3x32x16", "2x3x64x16",
       "norm [sum over keys] feature_map elu_plus_one", 6, 6, 64, 32, 8, 16,
       true},
      // K and V shared by the heads: one context per batch.
      {"2x3x64x8", "32x8", "32x16", "2x3x64x16",
       "norm [sum over keys eps 0.5] scale 2.0 feature_map elu_plus_one", 1, 6,
       64, 32, 8, 16, true},
      {"2x3x64x8", "2x1x32x8", "2x1x32x16", "2x3x64x16", "norm []", 2, 6, 64,
       32, 8, 16, false},
  };
  for (const FormulaCase &c : cases) {
    SCOPED_TRACE(c.attributes);
    auto [module, rewritten] =
        parseAndForce(spec(c.q, c.k, c.v, c.o, c.attributes));
    ASSERT_TRUE(module);
    EXPECT_FALSE(hasDotProduct(*rewritten));
    uint64_t formula =
        linearAttentionMacs<SaturatingCount>({c.contextBatch}, {c.batch}, {c.n},
                                             {c.m}, {c.dk}, {c.dv}, c.rowSums)
            .value;
    EXPECT_EQ(totalMacs(*rewritten), formula);
    uint64_t quadratic = quadraticAttentionMacs<SaturatingCount>(
                             {c.batch}, {c.n}, {c.m}, {c.dk}, {c.dv})
                             .value;
    EXPECT_EQ(totalMacs(*module), quadratic);
    expectSameFunction(*module, *rewritten);
  }
}

struct ChunkedCase {
  const char *q, *k, *v, *o, *attributes;
  int64_t dynamicSize; ///< the size of `?` dims, or -1 for static shapes
  uint64_t contextBatch, batch, positions, dk, dv;
};

TEST_F(ReassociateTest, ChunkedCausalFormulaMatchesTheEmittedOps) {
  // chunkedCausalAttentionMacs, which the run-time choice evaluates, against
  // the ops of the causal form with whole chunks of 64: static n = m = 128,
  // and dynamic sizes costed at n = 100 and 200 (padded to 128 and 256).
  const ChunkedCase cases[] = {
      {"2x128x8", "2x128x8", "2x128x4", "2x128x4",
       "norm [sum over keys] feature_map elu_plus_one causal", -1, 2, 2, 128, 8,
       4},
      {"2x?x8", "2x?x8", "2x?x4", "2x?x4", "norm [] causal", 100, 2, 2, 128, 8,
       4},
      // K and V shared by 3 heads: one state per batch and chunk.
      {"2x3x?x8", "2x1x?x8", "2x1x?x16", "2x3x?x16",
       "norm [sum over keys eps 0.5] feature_map elu_plus_one causal", 200, 2,
       6, 256, 8, 16},
  };
  for (const ChunkedCase &c : cases) {
    SCOPED_TRACE(c.q);
    auto [module, rewritten] =
        parseAndForce(spec(c.q, c.k, c.v, c.o, c.attributes));
    ASSERT_TRUE(module);
    auto func = *rewritten->getOps<func::FuncOp>().begin();
    OwningOpRef<func::FuncOp> sized =
        c.dynamicSize < 0 ? func.clone() : withDynamicSize(func, c.dynamicSize);
    uint64_t formula =
        chunkedCausalAttentionMacs<SaturatingCount>(
            {c.contextBatch}, {c.batch}, {c.positions}, {64}, {c.dk}, {c.dv})
            .value;
    EXPECT_EQ(totalMacs(*sized), formula);
  }
}

TEST_F(ReassociateTest, CausalChunkedFormIsExactForEveryChunkSize) {
  // Signed inputs with elu+1 keep the row sums positive; counts and scale
  // before and after the sum.
  std::string ir = spec("2x48x8", "2x48x8", "2x48x4", "2x48x4",
                        "norm [count over keys, sum over keys eps 0.25, "
                        "count over queries] scale 0.5 "
                        "feature_map elu_plus_one causal");
  OwningOpRef<ModuleOp> module = parse(ir);
  ASSERT_TRUE(module);
  for (int64_t chunk : {1, 2, 3, 8, 16, 24, 48}) {
    SCOPED_TRACE(chunk);
    AttnReassociatePassOptions options;
    options.force = true;
    options.chunkSize = chunk;
    OwningOpRef<ModuleOp> rewritten = reassociate(*module, options);
    EXPECT_FALSE(
        isa<DotProductAttentionOp>((*rewritten->getOps<func::FuncOp>().begin())
                                       .getBody()
                                       .front()
                                       .back()
                                       .getOperand(0)
                                       .getDefiningOp()));
    expectSameFunction(*module, *rewritten);
  }
}

TEST_F(ReassociateTest, CausalCountWithoutSum) {
  OwningOpRef<ModuleOp> module = parse(
      spec("40x6", "40x6", "40x5", "40x5", "norm [none over keys] causal"));
  ASSERT_TRUE(module);
  AttnReassociatePassOptions options;
  options.force = true;
  options.chunkSize = 8;
  expectSameFunction(*module, *reassociate(*module, options));
}

TEST_F(ReassociateTest, SoftmaxApproximationIsTheEfficientAttentionOp) {
  // The opt-in rewrite must be exactly attn.efficient variant softmax (the
  // reference kernel written independently) when scale is 1.
  OwningOpRef<ModuleOp> module = parse(
      spec("2x32x8", "2x24x8", "2x24x4", "2x32x4", "norm [softmax over keys]"));
  OwningOpRef<ModuleOp> efficient =
      parse("func.func @f(%q: tensor<2x32x8xf32>, %k: tensor<2x24x8xf32>, "
            "%v: tensor<2x24x4xf32>) -> tensor<2x32x4xf32> {\n"
            "  %o = attn.efficient %q, %k, %v variant softmax : "
            "tensor<2x32x8xf32>, tensor<2x24x8xf32>, tensor<2x24x4xf32> -> "
            "tensor<2x32x4xf32>\n  return %o : tensor<2x32x4xf32>\n}\n");
  ASSERT_TRUE(module && efficient);
  AttnReassociatePassOptions options;
  options.force = true;
  options.allowSoftmaxApproximation = true;
  // The pass emits a remark; keep it off the test output.
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });
  expectSameFunction(*efficient, *reassociate(*module, options));
}

} // namespace
