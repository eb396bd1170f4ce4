//===- LoweringFixes.cpp - Custom Halide lowering passes ------------------===//

#include "codegen/LoweringFixes.h"

#include <optional>
#include <string>
#include <vector>

using namespace Halide::Internal;
using Halide::Expr;

namespace {

/// The prefix of the line loops SplitPrefetch creates.
constexpr const char *kLineLoopPrefix = "prefetch_split_";
/// Line loops up to this extent (static) are unrolled.
constexpr int64_t kMaxUnrolledLines = 8;

class FixSplitPrefetch : public IRMutator {
  using IRMutator::visit;

  /// The line loops around the current statement.
  std::vector<std::string> lineLoops;

  Stmt visit(const For *op) override {
    bool lineLoop = op->name.rfind(kLineLoopPrefix, 0) == 0;
    if (lineLoop)
      lineLoops.push_back(op->name);
    Stmt result = IRMutator::visit(op);
    if (!lineLoop)
      return result;
    lineLoops.pop_back();
    const For *loop = result.as<For>();
    std::optional<int64_t> min, extent;
    if (loop) {
      min = as_const_int(loop->min);
      extent = as_const_int(loop->extent);
    }
    if (!min || !extent || *extent < 1 || *extent > kMaxUnrolledLines)
      return result;
    std::vector<Stmt> lines;
    for (int64_t line = 0; line < *extent; ++line)
      lines.push_back(simplify(substitute(
          loop->name, Expr(static_cast<int32_t>(*min + line)), loop->body)));
    return Block::make(lines);
  }

  Expr visit(const Call *op) override {
    if (!op->is_intrinsic(Call::prefetch) || lineLoops.empty())
      return IRMutator::visit(op);
    // args: buffer, offset (elements), extent, stride; the offset is
    // linear in each line loop's variable with a coefficient in bytes.
    int bytes = op->type.bytes();
    Expr offset = op->args[1];
    for (const std::string &name : lineLoops) {
      if (!expr_uses_var(offset, name))
        continue;
      Expr atZero = substitute(name, Expr(0), offset);
      Expr stepBytes = simplify(substitute(name, Expr(1), offset) - atZero);
      offset = simplify(atZero + Variable::make(Halide::Int(32), name) *
                                     (stepBytes / bytes));
    }
    std::vector<Expr> args = op->args;
    args[1] = offset;
    return Call::make(op->type, op->name, args, op->call_type, op->func,
                      op->value_index, op->image, op->param);
  }
};

} // namespace

void mlir::attn::codegen::addPrefetchLoweringFix(Halide::Pipeline &pipeline) {
  pipeline.add_custom_lowering_pass(new FixSplitPrefetch);
}
