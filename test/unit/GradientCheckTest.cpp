//===- GradientCheckTest.cpp - attn-run --check-grad, checked itself ------===//
//
// api::checkGradient compares a reference gradient with finite differences.
// It must fail a gradient that is wrong, even by a little, and pass a right
// one, also where a gradient is exactly 0 while the function moves in its
// last bits (the differences' rounding is not an error of the gradient).
// A wrong gradient here is the right gradient of a slightly different
// function: --attn-grad of @wrong (scale 0.25 (1 + delta)) checked against
// @f (scale 0.25).
//
//===----------------------------------------------------------------------===//

#include "api/Gradient.h"
#include "api/KernelCheck.h"
#include "dialect/AttnOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <string>

using namespace mlir;
using namespace mlir::attn;
using namespace mlir::attn::api;
namespace rt = ::attn::runtime;

namespace {

/// Softmax attention, 5 queries, 7 keys, scale `scale`, as @`name`.
std::string attention(const std::string &name, const std::string &scale) {
  return "func.func @" + name +
         "(%q: tensor<5x4xf64>, %k: tensor<7x4xf64>, %v: tensor<7x3xf64>) "
         "-> tensor<5x3xf64> {\n"
         "  %o = attn.dot_product %q, %k, %v norm [softmax over keys] scale " +
         scale +
         " : tensor<5x4xf64>, tensor<7x4xf64>, tensor<7x3xf64> -> "
         "tensor<5x3xf64>\n"
         "  return %o : tensor<5x3xf64>\n}\n";
}

class GradientCheckTest : public ::testing::Test {
protected:
  GradientCheckTest() {
    context.loadDialect<AttnDialect, func::FuncDialect, arith::ArithDialect,
                        scf::SCFDialect, tensor::TensorDialect>();
  }

  /// `ir` with @<name>_grad next to each function.
  OwningOpRef<ModuleOp> withGradients(const std::string &ir) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(ir, &context);
    EXPECT_TRUE(module);
    if (!module)
      return module;
    PassManager pm(&context);
    pm.addPass(createAttnGradPass());
    EXPECT_TRUE(succeeded(pm.run(*module)));
    return module;
  }

  /// checkGradient of @`forward` against @`gradient` on signed random
  /// inputs and cotangents; `printed` gets its lines.
  LogicalResult check(ModuleOp module, StringRef forward, StringRef gradient,
                      std::string &printed) {
    auto f = module.lookupSymbol<func::FuncOp>(forward);
    auto grad = module.lookupSymbol<func::FuncOp>(gradient);
    std::vector<rt::Tensor> inputs, cotangents;
    std::vector<std::string> names;
    uint64_t seed = 11;
    auto random = [&](Type type) {
      ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
      rt::Tensor tensor;
      EXPECT_TRUE(succeeded(
          makeRandomTensor(std::vector<int64_t>(shape.begin(), shape.end()),
                           seed++, tensor, -1.0, 1.0)));
      return tensor;
    };
    for (Type type : f.getArgumentTypes()) {
      inputs.push_back(random(type));
      names.push_back("a" + std::to_string(names.size()));
    }
    for (Type type : f.getResultTypes())
      cotangents.push_back(random(type));
    llvm::raw_string_ostream stream(printed);
    Console console;
    console.out = &stream;
    console.err = &stream;
    SmallVector<rt::Tensor> gradients;
    std::string error;
    LogicalResult result =
        checkGradient(f, grad, inputs, cotangents, names,
                      kGradientCheckTolerance, console, gradients, error);
    EXPECT_EQ(error, "");
    return result;
  }

  MLIRContext context;
};

TEST_F(GradientCheckTest, PassesTheRightGradient) {
  OwningOpRef<ModuleOp> module = withGradients(attention("f", "0.25"));
  std::string printed;
  EXPECT_TRUE(succeeded(check(*module, "f", "f_grad", printed))) << printed;
}

// The gradient of scale 0.25 (1 + delta) against the function of scale
// 0.25: every entry is off by about delta relative, down to 1e-5, ten times
// the tolerance and far above what the differences resolve.
TEST_F(GradientCheckTest, FailsAGradientOffByLittle) {
  for (const char *scale : {"0.26", "0.2501", "0.2500025"}) {
    OwningOpRef<ModuleOp> module =
        withGradients(attention("f", "0.25") + attention("wrong", scale));
    std::string printed;
    EXPECT_TRUE(failed(check(*module, "f", "wrong_grad", printed)))
        << "scale " << scale << ":\n"
        << printed;
    EXPECT_NE(printed.find("FAILED: max rel err"), std::string::npos)
        << printed;
  }
}

// Efficient attention over one position: softmax over one position is 1,
// so the output is V's row whatever Q is, and dQ is exactly 0; the
// differences of the output in Q are its rounding (about 1e-11 of
// "derivative" here), which must not count as an error of dQ.
TEST_F(GradientCheckTest, PassesAGradientThatIsZeroUnderRounding) {
  OwningOpRef<ModuleOp> module = withGradients(
      "func.func @f(%q: tensor<1x15xf64>, %k: tensor<1x15xf64>, "
      "%v: tensor<1x64xf64>) -> tensor<1x64xf64> {\n"
      "  %o = attn.efficient %q, %k, %v variant softmax : tensor<1x15xf64>, "
      "tensor<1x15xf64>, tensor<1x64xf64> -> tensor<1x64xf64>\n"
      "  return %o : tensor<1x64xf64>\n}\n");
  std::string printed;
  EXPECT_TRUE(succeeded(check(*module, "f", "f_grad", printed))) << printed;
}

} // namespace
