//===- SpecLoader.cpp - Parse a spec file and name its arguments ----------===//

#include "tools/common/SpecLoader.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

using namespace mlir;

LogicalResult mlir::attn::loadSpec(MLIRContext &context,
                                   llvm::SourceMgr &sourceMgr,
                                   LoadedSpec &spec) {
  spec.module = ModuleOp::create(UnknownLoc::get(&context));
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, spec.module->getBody(), config,
                                &spec.parserState)))
    return failure();
  Block *body = spec.module->getBody();
  if (llvm::hasSingleElement(*body))
    if (auto inner = dyn_cast<ModuleOp>(body->front())) {
      inner->remove();
      spec.module = inner;
    }
  return verify(*spec.module);
}

std::string mlir::attn::argumentName(const AsmParserState &state,
                                     func::FuncOp func, unsigned index) {
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
