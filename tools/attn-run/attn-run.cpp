//===- attn-run.cpp - Evaluate attention specs on .npy inputs -------------===//
//
//   attn-run SPEC [--func NAME] --input q=q.npy --input k.npy ... \
//            [--random SEED] [--save-inputs DIR] [--output out.npy]
//   attn-run SPEC --verify-rewrites PIPELINE [--random SEED]
//            [--dynamic-size N]
//
// Evaluates one func.func of a spec with the reference runtime. Inputs are
// matched to arguments by name (`q=file.npy`, the SSA name written in the
// spec) or by position (bare `file.npy`, in argument order). Errors about
// the spec carry file:line:col; errors about files name the file.
//
// --verify-rewrites runs PIPELINE (e.g. "attn-reassociate") on a copy of the
// spec and evaluates every function before and after on the same random
// inputs, printing the largest absolute and relative difference. It fails
// when a rewrite that claims to be exact (no op carries attn.approximation)
// differs by more than 1e-5 relative.
//
//===----------------------------------------------------------------------===//

#include "dialect/AttnDialect.h"
#include "passes/Passes.h"
#include "runtime/Npy.h"
#include "runtime/Tensor.h"
#include "tools/common/ReferenceEvaluator.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <new>

using namespace mlir;
namespace cl = llvm::cl;
namespace rt = ::attn::runtime;

static cl::OptionCategory runCategory("attn-run options");

static cl::opt<std::string> specFile(cl::Positional, cl::Required,
                                     cl::desc("<spec.mlir>"),
                                     cl::cat(runCategory));
static cl::opt<std::string>
    funcName("func", cl::desc("Function to evaluate (default: the only one)"),
             cl::value_desc("name"), cl::cat(runCategory));
static cl::list<std::string> inputFiles(
    "input",
    cl::desc("An input as name=file.npy (argument name as written in the "
             "spec, without %) or file.npy (next argument in order)"),
    cl::value_desc("[name=]file.npy"), cl::cat(runCategory));
static cl::opt<uint64_t> randomSeed(
    "random",
    cl::desc("Fill every input not given with uniform values in [0, 1) "
             "generated from this seed (argument i uses seed + i)"),
    cl::value_desc("seed"), cl::cat(runCategory));
static cl::opt<std::string>
    saveInputsDir("save-inputs",
                  cl::desc("Write every input to DIR/<name>.npy (useful "
                           "with --random)"),
                  cl::value_desc("dir"), cl::cat(runCategory));
static cl::list<std::string>
    outputFiles("output",
                cl::desc("Write result i to the i-th --output file (.npy, "
                         "element type of the result)"),
                cl::value_desc("file.npy"), cl::cat(runCategory));
static cl::opt<bool> quiet("quiet", cl::desc("Do not print the result summary"),
                           cl::cat(runCategory));
static cl::opt<std::string> verifyRewrites(
    "verify-rewrites",
    cl::desc("Run this pass pipeline (e.g. \"attn-reassociate\") on a copy "
             "of the spec; evaluate every function before and after on the "
             "same random inputs and report the largest difference; fail if "
             "an exact rewrite differs by more than 1e-5 relative"),
    cl::value_desc("pipeline"), cl::cat(runCategory));
static cl::opt<int64_t> dynamicSize(
    "dynamic-size",
    cl::desc("With random inputs, give every dynamic (?) argument dim this "
             "size"),
    cl::value_desc("N"), cl::init(-1), cl::cat(runCategory));

/// An exact rewrite may differ from the original by float reassociation only.
constexpr double kExactRelativeTolerance = 1e-5;

static int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "attn-run") << message << "\n";
  return 1;
}

namespace {
/// A parsed spec and the source names of its functions' arguments.
struct LoadedSpec {
  OwningOpRef<ModuleOp> module;
  AsmParserState parserState;
};
} // namespace

/// The name an argument has in the source (`%q` -> "q"), else "argN".
static std::string argumentName(const AsmParserState &state, func::FuncOp func,
                                unsigned index) {
  if (const AsmParserState::BlockDefinition *def =
          state.getBlockDef(&func.getBody().front())) {
    if (index < def->arguments.size()) {
      llvm::SMRange range = def->arguments[index].loc;
      if (range.isValid()) {
        StringRef text(range.Start.getPointer(),
                       range.End.getPointer() - range.Start.getPointer());
        if (text.consume_front("%") && !text.empty())
          return text.str();
      }
    }
  }
  return "arg" + std::to_string(index);
}

static LogicalResult loadSpec(MLIRContext &context, llvm::SourceMgr &sourceMgr,
                              LoadedSpec &spec) {
  spec.module = ModuleOp::create(UnknownLoc::get(&context));
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, spec.module->getBody(), config,
                                &spec.parserState)))
    return failure();
  // A file that holds one explicit `module { ... }` is that module.
  Block *body = spec.module->getBody();
  if (llvm::hasSingleElement(*body))
    if (auto inner = dyn_cast<ModuleOp>(body->front())) {
      inner->remove();
      spec.module = inner;
    }
  return verify(*spec.module);
}

static void printSummary(StringRef label, const rt::Tensor &tensor) {
  double minimum = INFINITY, maximum = -INFINITY, sum = 0.0;
  for (double value : tensor.data) {
    minimum = std::min(minimum, value);
    maximum = std::max(maximum, value);
    sum += value;
  }
  llvm::outs() << label << ": " << tensor.shapeString() << " min "
               << llvm::format("%.6g", minimum) << " max "
               << llvm::format("%.6g", maximum) << " mean "
               << llvm::format("%.6g", tensor.data.empty()
                                           ? 0.0
                                           : sum / double(tensor.data.size()))
               << "\n";
}

/// A uniform [0, 1) input for an argument of `type` (dynamic dims take
/// --dynamic-size), rounded to f32 so f32 kernels and the reference see the
/// same numbers. Returns an error message, or "" on success.
static std::string makeRandomInput(RankedTensorType type, uint64_t seed,
                                   const std::string &name, rt::Tensor &input) {
  std::vector<int64_t> shape;
  for (int64_t dim : type.getShape()) {
    if (ShapedType::isDynamic(dim)) {
      if (dynamicSize < 0)
        return "input '" + name +
               "' has dynamic shape; random inputs need static sizes: pass it "
               "with --input or give --dynamic-size N";
      dim = dynamicSize;
    }
    shape.push_back(dim);
  }
  input = rt::Tensor(std::move(shape));
  if (input.numElements() != rt::checkedNumElements(input.shape))
    return "input '" + name + "' (" + input.shapeString() +
           ") is too large to allocate";
  rt::fillUniform(input, seed);
  for (double &value : input.data)
    value = static_cast<float>(value);
  return "";
}

/// Largest |a - b| and, relative to the original's scale, the largest
/// |a - b| / max |b| (b: original results); positions where both are NaN
/// agree, a NaN on one side only is an infinite error.
struct Difference {
  double absolute = 0.0;
  double relative = 0.0;
};

static Difference compareResults(ArrayRef<rt::Tensor> original,
                                 ArrayRef<rt::Tensor> rewritten) {
  Difference worst;
  for (auto [before, after] : llvm::zip_equal(original, rewritten)) {
    double maxError = 0.0, maxMagnitude = 0.0;
    for (auto [b, a] : llvm::zip_equal(before.data, after.data)) {
      if (std::isnan(a) && std::isnan(b))
        continue;
      double error = std::fabs(a - b);
      maxError = std::isnan(error) ? INFINITY : std::max(maxError, error);
      if (std::isfinite(b))
        maxMagnitude = std::max(maxMagnitude, std::fabs(b));
    }
    double relative = maxError == 0.0      ? 0.0
                      : maxMagnitude > 0.0 ? maxError / maxMagnitude
                                           : INFINITY;
    worst.absolute = std::max(worst.absolute, maxError);
    worst.relative = std::max(worst.relative, relative);
  }
  return worst;
}

static std::string printed(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().printGenericOpForm());
  return text;
}

/// --verify-rewrites: every function of `module` before and after `pipeline`.
static int verifyRewritesOf(MLIRContext &context, ModuleOp module,
                            const LoadedSpec &spec) {
  OwningOpRef<ModuleOp> rewritten = module.clone();
  PassManager passes(&context);
  std::string parseErrors;
  llvm::raw_string_ostream errorStream(parseErrors);
  if (failed(parsePassPipeline(verifyRewrites, passes, errorStream)))
    return fail("--verify-rewrites: cannot parse pipeline '" + verifyRewrites +
                "': " + parseErrors);
  if (failed(passes.run(*rewritten)))
    return fail("--verify-rewrites: pipeline '" + verifyRewrites + "' failed");

  uint64_t seed = randomSeed.getNumOccurrences() ? randomSeed.getValue() : 1;
  bool exactFailed = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    auto after = rewritten->lookupSymbol<func::FuncOp>(func.getSymName());
    if (!after)
      return fail("--verify-rewrites: the pipeline removed @" +
                  func.getSymName());
    std::vector<rt::Tensor> inputs(func.getNumArguments());
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      std::string name = argumentName(spec.parserState, func, i);
      auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
      if (!type)
        return fail("argument '" + name + "' of @" + func.getSymName() +
                    " is not a ranked tensor");
      std::string error = makeRandomInput(type, seed + i, name, inputs[i]);
      if (!error.empty())
        return fail("@" + func.getSymName() + ": " + error);
    }
    SmallVector<rt::Tensor> before, afterResults;
    if (failed(mlir::attn::evaluateWithReference(func, inputs, before)) ||
        failed(mlir::attn::evaluateWithReference(after, inputs, afterResults)))
      return 1;
    if (before.size() != afterResults.size())
      return fail("--verify-rewrites: @" + func.getSymName() +
                  " returns a different number of results after the pipeline");
    for (auto [b, a] : llvm::zip_equal(before, afterResults))
      if (b.shape != a.shape)
        return fail("--verify-rewrites: @" + func.getSymName() + " returns " +
                    a.shapeString() + " after the pipeline, " +
                    b.shapeString() + " before");

    // An op that carries attn.approximation makes the function approximate.
    std::string approximation;
    after.walk([&](Operation *op) {
      if (auto note = op->getAttrOfType<StringAttr>("attn.approximation"))
        approximation = note.str();
    });
    Difference difference = compareResults(before, afterResults);
    std::string kind = !approximation.empty() ? "approximate: " + approximation
                       : printed(func) == printed(after) ? "unchanged"
                                                         : "exact";
    llvm::outs() << "verify-rewrites: @" << func.getSymName()
                 << " max abs err = "
                 << llvm::format("%.3g", difference.absolute)
                 << ", max rel err = "
                 << llvm::format("%.3g", difference.relative) << " (" << kind
                 << ")\n";
    if (approximation.empty() &&
        !(difference.relative <= kExactRelativeTolerance)) {
      llvm::WithColor::error(llvm::errs(), "attn-run")
          << "@" << func.getSymName() << ": the pipeline claims an exact "
          << "rewrite but the results differ by "
          << llvm::format("%.3g", difference.relative) << " relative (> "
          << kExactRelativeTolerance << ")\n";
      exactFailed = true;
    }
  }
  return exactFailed ? 1 : 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // InitLLVM makes a failed `new` abort with "LLVM ERROR: out of memory". The
  // reference runtime instead catches std::bad_alloc and reports a Status, so
  // an input too large for this machine is an error, not a crash.
  std::set_new_handler(nullptr);
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "attn-run: evaluate an attention spec on .npy inputs with the "
      "reference runtime\n\n"
      "  attn-run spec.mlir --func f --input q=q.npy --input k=k.npy "
      "--input v=v.npy --output o.npy\n"
      "  attn-run spec.mlir --random 7 --save-inputs inputs/ --output o.npy\n"
      "  attn-run spec.mlir --verify-rewrites attn-reassociate --random 7\n");

  DialectRegistry registry;
  registry.insert<mlir::attn::AttnDialect, arith::ArithDialect,
                  func::FuncDialect, scf::SCFDialect, tensor::TensorDialect>();
  // Passes --verify-rewrites can name.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::attn::registerAttnPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // file:line:col and the source line say which op; the generic form of the
  // op would only repeat it.
  context.printOpOnDiagnostic(false);

  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> buffer = openInputFile(specFile, &error);
  if (!buffer)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);

  LoadedSpec spec;
  if (failed(loadSpec(context, sourceMgr, spec)))
    return 1;

  if (verifyRewrites.getNumOccurrences()) {
    if (!inputFiles.empty() || !outputFiles.empty() || !funcName.empty())
      return fail("--verify-rewrites evaluates every function on random "
                  "inputs; it takes no --input, --output or --func");
    return verifyRewritesOf(context, *spec.module, spec);
  }

  // Pick the function.
  SmallVector<func::FuncOp> funcs;
  for (auto func : spec.module->getOps<func::FuncOp>())
    if (!func.isExternal())
      funcs.push_back(func);
  func::FuncOp func;
  if (funcName.empty()) {
    if (funcs.size() != 1) {
      std::string names;
      for (func::FuncOp f : funcs)
        names += " @" + f.getSymName().str();
      return fail(specFile + " defines " + llvm::Twine(funcs.size()) +
                  " functions; choose one with --func:" + names);
    }
    func = funcs.front();
  } else {
    func = spec.module->lookupSymbol<func::FuncOp>(funcName);
    if (!func || func.isExternal())
      return fail(specFile + " has no function @" + funcName);
  }

  // Map inputs to arguments: by name, or the next unfilled argument.
  unsigned numArgs = func.getNumArguments();
  std::vector<std::string> names;
  for (unsigned i = 0; i < numArgs; ++i)
    names.push_back(argumentName(spec.parserState, func, i));
  std::vector<rt::Tensor> inputs(numArgs);
  std::vector<bool> given(numArgs, false);
  unsigned nextPositional = 0;
  for (const std::string &entry : inputFiles) {
    StringRef text(entry);
    unsigned index;
    std::string path;
    auto [name, file] = text.split('=');
    if (!file.empty()) {
      auto it = llvm::find(names, name.str());
      if (it == names.end()) {
        std::string known;
        for (const std::string &n : names)
          known += " " + n;
        return fail("--input " + entry + ": @" + func.getSymName() +
                    " has no argument '" + name + "' (arguments:" + known +
                    ")");
      }
      index = it - names.begin();
      path = file.str();
    } else {
      while (nextPositional < numArgs && given[nextPositional])
        ++nextPositional;
      if (nextPositional == numArgs)
        return fail("--input " + entry + ": @" + func.getSymName() +
                    " takes only " + llvm::Twine(numArgs) + " inputs");
      index = nextPositional;
      path = entry;
    }
    if (given[index])
      return fail("input '" + names[index] + "' is given twice");
    rt::Status status = rt::readNpy(path, inputs[index]);
    if (!status)
      return fail(status.message());
    given[index] = true;
  }
  for (unsigned i = 0; i < numArgs; ++i) {
    if (given[i])
      continue;
    auto type = dyn_cast<RankedTensorType>(func.getArgument(i).getType());
    if (randomSeed.getNumOccurrences() == 0 || !type)
      return fail("missing input '" + names[i] + "' (argument #" +
                  llvm::Twine(i) + " of @" + func.getSymName() +
                  "); pass --input " + names[i] + "=file.npy or --random SEED");
    std::string error =
        makeRandomInput(type, randomSeed + i, names[i], inputs[i]);
    if (!error.empty())
      return fail(error);
  }
  if (!saveInputsDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(saveInputsDir))
      return fail("cannot create " + saveInputsDir + ": " + ec.message());
    for (unsigned i = 0; i < numArgs; ++i) {
      SmallString<128> path(saveInputsDir);
      llvm::sys::path::append(path, names[i] + ".npy");
      rt::Status status =
          rt::writeNpy(std::string(path), inputs[i], rt::NpyDType::Float32);
      if (!status)
        return fail(status.message());
    }
  }

  SmallVector<rt::Tensor> results;
  if (failed(mlir::attn::evaluateWithReference(func, inputs, results)))
    return 1;

  if (outputFiles.size() > results.size())
    return fail("--output given " + llvm::Twine(outputFiles.size()) +
                " times but @" + func.getSymName() + " returns " +
                llvm::Twine(results.size()) + " results");
  for (auto [index, result] : llvm::enumerate(results)) {
    if (!quiet)
      printSummary("result #" + std::to_string(index), result);
    if (index >= outputFiles.size())
      continue;
    auto type = cast<RankedTensorType>(func.getResultTypes()[index]);
    rt::Status status =
        rt::writeNpy(outputFiles[index], result,
                     type.getElementType().isF64() ? rt::NpyDType::Float64
                                                   : rt::NpyDType::Float32);
    if (!status)
      return fail(status.message());
  }
  return 0;
}
