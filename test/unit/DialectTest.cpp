//===- DialectTest.cpp - Shape inference and rewrites, checked by numbers -===//
//
// Fixtures own an MLIRContext and parse inline IR. Numeric checks evaluate IR
// with the reference runtime (through the evaluator attn-run uses) and
// compare against a second formulation of the same function.
//
//===----------------------------------------------------------------------===//

#include "api/KernelCheck.h"
#include "api/ReferenceEvaluator.h"
#include "dialect/AttnOps.h"
#include "runtime/Reference.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::api;
namespace rt = ::attn::runtime;

namespace {

class AttnDialectTest : public ::testing::Test {
protected:
  AttnDialectTest() {
    context.loadDialect<AttnDialect, func::FuncDialect, arith::ArithDialect,
                        tensor::TensorDialect>();
  }

  OwningOpRef<ModuleOp> parse(StringRef ir) {
    return parseSourceString<ModuleOp>(ir, &context);
  }

  /// Evaluates @name on inputs filled from `seed`, one per argument.
  rt::Tensor evaluate(ModuleOp module, StringRef name, uint64_t seed) {
    auto func = module.lookupSymbol<func::FuncOp>(name);
    EXPECT_TRUE(func) << "no function @" << name.str();
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

  MLIRContext context;
};

double maxRelativeError(const rt::Tensor &actual, const rt::Tensor &expected) {
  EXPECT_EQ(actual.shape, expected.shape);
  double worst = 0.0;
  for (size_t i = 0; i < actual.data.size() && i < expected.data.size(); ++i)
    worst = std::max(worst, std::abs(actual.data[i] - expected.data[i]) /
                                std::max(1.0, std::abs(expected.data[i])));
  return worst;
}

// Non-local attention with [count over keys] is Q (K^T V) / m: the
// reassociation the compiler relies on, written with primitive ops.
TEST_F(AttnDialectTest, ScalingAttentionEqualsItsPrimitiveReassociation) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @quadratic(%q: tensor<2x12x4xf32>, %k: tensor<2x10x4xf32>,
                         %v: tensor<2x10x6xf32>) -> tensor<2x12x6xf32> {
      %o = attn.dot_product %q, %k, %v norm [count over keys]
          : tensor<2x12x4xf32>, tensor<2x10x4xf32>, tensor<2x10x6xf32>
          -> tensor<2x12x6xf32>
      return %o : tensor<2x12x6xf32>
    }
    func.func @linear(%q: tensor<2x12x4xf32>, %k: tensor<2x10x4xf32>,
                      %v: tensor<2x10x6xf32>) -> tensor<2x12x6xf32> {
      %ctx = attn.matmul %k, %v transpose_lhs
          : tensor<2x10x4xf32>, tensor<2x10x6xf32> -> tensor<2x4x6xf32>
      %o = attn.matmul %q, %ctx
          : tensor<2x12x4xf32>, tensor<2x4x6xf32> -> tensor<2x12x6xf32>
      %s = attn.scale %o by 0.1 : tensor<2x12x6xf32>
      return %s : tensor<2x12x6xf32>
    }
  )mlir");
  ASSERT_TRUE(module);
  rt::Tensor quadratic = evaluate(*module, "quadratic", 11);
  rt::Tensor linear = evaluate(*module, "linear", 11);
  EXPECT_LT(maxRelativeError(linear, quadratic), 1e-12);
}

// Causal softmax attention written with primitives: mask, softmax, product.
TEST_F(AttnDialectTest, CausalSoftmaxEqualsPrimitiveForm) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @fused(%q: tensor<3x9x5xf32>, %k: tensor<3x9x5xf32>,
                     %v: tensor<3x9x7xf32>) -> tensor<3x9x7xf32> {
      %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale 0.5 causal
          : tensor<3x9x5xf32>, tensor<3x9x5xf32>, tensor<3x9x7xf32>
          -> tensor<3x9x7xf32>
      return %o : tensor<3x9x7xf32>
    }
    func.func @primitive(%q: tensor<3x9x5xf32>, %k: tensor<3x9x5xf32>,
                         %v: tensor<3x9x7xf32>) -> tensor<3x9x7xf32> {
      %s = attn.matmul %q, %k transpose_rhs
          : tensor<3x9x5xf32>, tensor<3x9x5xf32> -> tensor<3x9x9xf32>
      %scaled = attn.scale %s by 0.5 : tensor<3x9x9xf32>
      %masked = attn.causal_mask %scaled : tensor<3x9x9xf32>
      %p = attn.normalize softmax %masked dim 2 : tensor<3x9x9xf32>
      %o = attn.matmul %p, %v
          : tensor<3x9x9xf32>, tensor<3x9x7xf32> -> tensor<3x9x7xf32>
      return %o : tensor<3x9x7xf32>
    }
  )mlir");
  ASSERT_TRUE(module);
  EXPECT_LT(maxRelativeError(evaluate(*module, "primitive", 5),
                             evaluate(*module, "fused", 5)),
            1e-12);
}

// The canonicalization attn.external -> attn.dot_product keeps the function.
TEST_F(AttnDialectTest, ExternalCanonicalizationPreservesValues) {
  const char *ir = R"mlir(
    func.func @eanet(%x: tensor<2x20x8xf32>, %mk: tensor<6x8xf32>,
                     %mv: tensor<6x8xf32>) -> tensor<2x20x8xf32> {
      %o = attn.external %x, %mk, %mv
          : tensor<2x20x8xf32>, tensor<6x8xf32>, tensor<6x8xf32>
          -> tensor<2x20x8xf32>
      return %o : tensor<2x20x8xf32>
    }
  )mlir";
  OwningOpRef<ModuleOp> before = parse(ir);
  OwningOpRef<ModuleOp> after = parse(ir);
  ASSERT_TRUE(before && after);
  PassManager pm(&context);
  pm.addPass(createCanonicalizerPass());
  ASSERT_TRUE(succeeded(pm.run(*after)));
  bool rewritten = false;
  after->walk([&](DotProductAttentionOp) { rewritten = true; });
  EXPECT_TRUE(rewritten);
  EXPECT_LT(maxRelativeError(evaluate(*after, "eanet", 3),
                             evaluate(*before, "eanet", 3)),
            1e-12);
}

// Builders infer result types with the same shape rules the verifier runs.
TEST_F(AttnDialectTest, BuildersInferResultTypes) {
  OpBuilder builder(&context);
  Location loc = builder.getUnknownLoc();
  auto module = ModuleOp::create(loc);
  builder.setInsertionPointToEnd(module.getBody());
  Type f32 = builder.getF32Type();
  auto lhsType = RankedTensorType::get({4, 1, 7, 3}, f32);
  auto rhsType = RankedTensorType::get({5, 7, 9}, f32);
  auto func = func::FuncOp::create(
      builder, loc, "f", builder.getFunctionType({lhsType, rhsType}, {}));
  builder.setInsertionPointToStart(func.addEntryBlock());
  auto matmul =
      MatmulOp::create(builder, loc, func.getArgument(0), func.getArgument(1),
                       /*transpose_lhs=*/true, /*transpose_rhs=*/false);
  EXPECT_EQ(matmul.getType(), RankedTensorType::get({4, 5, 3, 9}, f32));
  func::ReturnOp::create(builder, loc);
  module.erase();
}

// Shape errors surface as diagnostics at the op, not as crashes.
TEST_F(AttnDialectTest, MismatchedFeaturesAreDiagnosed) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (message.empty()) // the shape rule's error comes first
      message = diag.str();
    return success();
  });
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @bad(%q: tensor<8x4xf32>, %k: tensor<8x5xf32>,
                   %v: tensor<8x4xf32>) -> tensor<8x4xf32> {
      %o = attn.dot_product %q, %k, %v norm [softmax over keys]
          : tensor<8x4xf32>, tensor<8x5xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
      return %o : tensor<8x4xf32>
    }
  )mlir");
  EXPECT_FALSE(module);
  EXPECT_EQ(message, "query has 4 features but key has 5");
}

// attn-run --check's default tolerance follows docs/precision.md: 1e-4 in
// f32, 2 (2u + 2^-12) with a bf16 or f16 value, and 2 u_bf16 more for an op
// that opts into bf16 weights (also when only its operands are bf16).
TEST_F(AttnDialectTest, DefaultCheckToleranceFollowsThePrecisionRules) {
  auto tolerance = [&](StringRef attributes, StringRef type,
                       StringRef result) {
    std::string ir = (llvm::Twine("func.func @f(%q: tensor<4x8x") + type +
                      ">, %k: tensor<4x8x" + type + ">, %v: tensor<4x8x" +
                      type + ">) -> tensor<4x8x" + result + "> {\n" +
                      "  %o = attn.dot_product %q, %k, %v norm [softmax over "
                      "keys] " +
                      attributes + " : tensor<4x8x" + type + ">, tensor<4x8x" +
                      type + ">, tensor<4x8x" + type + "> -> tensor<4x8x" +
                      result + ">\n  return %o : tensor<4x8x" + result +
                      ">\n}\n")
                         .str();
    OwningOpRef<ModuleOp> module = parse(ir);
    EXPECT_TRUE(module) << ir;
    if (!module)
      return 0.0;
    return defaultCheckTolerance(
        cast<func::FuncOp>(module->getBody()->front()));
  };
  const double u = 0x1p-8;
  EXPECT_EQ(tolerance("", "f32", "f32"), kDefaultCheckTolerance);
  EXPECT_EQ(tolerance("", "bf16", "bf16"), 2 * (2 * u + 0x1p-12));
  EXPECT_EQ(tolerance("", "f16", "f16"), 2 * (2 * 0x1p-11 + 0x1p-12));
  EXPECT_EQ(tolerance("{attn.allow_bf16_products}", "bf16", "bf16"),
            2 * (2 * u + 0x1p-12) + 2 * u);
  EXPECT_EQ(tolerance("{attn.allow_bf16_products}", "bf16", "f32"),
            2 * (2 * u + 0x1p-12) + 2 * u);
  EXPECT_NEAR(tolerance("{attn.allow_bf16_products}", "bf16", "bf16"), 2.39e-2,
              1e-4);
  // A function of one op: its tolerance, NaN if it does not parse.
  auto toleranceOf = [&](const char *ir) {
    OwningOpRef<ModuleOp> module = parse(ir);
    EXPECT_TRUE(module) << ir;
    if (!module)
      return std::nan("");
    return defaultCheckTolerance(
        cast<func::FuncOp>(module->getBody()->front()));
  };
  // attn.efficient rounds both softmaxes' weights and its context.
  double efficient =
      toleranceOf("func.func @f(%q: tensor<8x4xbf16>, %k: tensor<8x4xbf16>, "
                  "%v: tensor<8x4xbf16>) -> tensor<8x4xbf16> {\n"
                  "  %o = attn.efficient %q, %k, %v variant softmax "
                  "{attn.allow_bf16_products} : tensor<8x4xbf16>, "
                  "tensor<8x4xbf16>, tensor<8x4xbf16> -> tensor<8x4xbf16>\n"
                  "  return %o : tensor<8x4xbf16>\n}\n");
  EXPECT_EQ(efficient, 2 * (2 * u + 0x1p-12) + (4 * u + 2 * u * u) / (1 - u));
  EXPECT_NEAR(efficient, 3.18e-2, 1e-4);
  // Linear attention (no softmax) rounds phi(Q), phi(K) and its context.
  double linear =
      toleranceOf("func.func @f(%q: tensor<8x4xbf16>, %k: tensor<8x4xbf16>, "
                  "%v: tensor<8x4xbf16>) -> tensor<8x4xbf16> {\n"
                  "  %o = attn.dot_product %q, %k, %v norm [sum over keys] "
                  "feature_map elu_plus_one {attn.allow_bf16_products} : "
                  "tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16> -> "
                  "tensor<8x4xbf16>\n"
                  "  return %o : tensor<8x4xbf16>\n}\n");
  EXPECT_EQ(linear, 2 * (2 * u + 0x1p-12) + ((1 + u) * (1 + u) * (1 + u) - 1));
  EXPECT_NEAR(linear, 2.79e-2, 1e-4);
  // A product rounds its two operands.
  double product =
      toleranceOf("func.func @f(%a: tensor<8x4xf32>, %b: tensor<4x8xf32>) -> "
                  "tensor<8x8xf32> {\n"
                  "  %c = attn.matmul %a, %b {attn.allow_bf16_products} : "
                  "tensor<8x4xf32>, tensor<4x8xf32> -> tensor<8x8xf32>\n"
                  "  return %c : tensor<8x8xf32>\n}\n");
  EXPECT_EQ(product, 2 * (2 * u + 0x1p-12) + ((1 + u) * (1 + u) - 1));
}

} // namespace
