//===- LoweringFixes.cpp - Custom Halide lowering passes ------------------===//

#include "codegen/LoweringFixes.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
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

/// Rewrites each horizontal reduction of a float vector to one lane into a
/// tree of halves: Halide 21 hands it to llvm.vector.reduce.fadd/fmax/...,
/// strict in a module with any is_nan/is_inf (Halide relaxes only its
/// arithmetic ops there), and LLVM expands those on x86 into a serial chain
/// of one scalar op per lane (16 dependent adds for 16 lanes; fmax with a
/// NaN check per lane). The halves are one vector op per step.
class ReduceLanesByHalves : public IRMutator {
  using IRMutator::visit;

  /// Depth of GPU loops around the current statement (left alone there).
  int gpuLoops = 0;

  Stmt visit(const For *op) override {
    bool gpu = is_gpu(op->for_type);
    gpuLoops += gpu;
    Stmt result = IRMutator::visit(op);
    gpuLoops -= gpu;
    return result;
  }

  Expr visit(const VectorReduce *op) override {
    Expr value = mutate(op->value);
    int lanes = value.type().lanes();
    Halide::Type element = op->type.element_of();
    bool halves =
        gpuLoops == 0 && op->type.lanes() == 1 && lanes >= 4 &&
        (lanes & (lanes - 1)) == 0 &&
        (element == Halide::Float(32) || element == Halide::Float(64)) &&
        (op->op == VectorReduce::Add || op->op == VectorReduce::Min ||
         op->op == VectorReduce::Max);
    if (!halves)
      return value.same_as(op->value)
                 ? Expr(op)
                 : VectorReduce::make(op->op, value, op->type.lanes());
    // Each step's vector is bound to a name, so that its two halves read
    // it once.
    std::vector<std::pair<std::string, Expr>> steps;
    for (int half = lanes / 2; half >= 1; half /= 2) {
      steps.emplace_back(unique_name("lanes"), value);
      Expr whole = Variable::make(value.type(), steps.back().first);
      Expr low = Shuffle::make_slice(whole, 0, 1, half);
      Expr high = Shuffle::make_slice(whole, half, 1, half);
      switch (op->op) {
      case VectorReduce::Add:
        value = Add::make(low, high);
        break;
      case VectorReduce::Min:
        value = Min::make(low, high);
        break;
      default:
        value = Max::make(low, high);
        break;
      }
    }
    for (auto step = steps.rbegin(); step != steps.rend(); ++step)
      value = Let::make(step->first, step->second, value);
    return value;
  }
};

/// Pads constant allocations of one 32-bit word or less (which Halide's
/// alloca leaves at the element's own alignment) to two words, which it
/// aligns to the vector; the stores' alignment claims then hold.
class PadSingleWordAllocations : public IRMutator {
  using IRMutator::visit;

  /// Bytes Halide allocates as one alloca element (it rounds a stack
  /// allocation up to 32-bit words).
  static constexpr int kWordBytes = 4;

  /// Whether `body` stores a vector into the buffer `name` (a scalar
  /// accumulator of one float stays as it is: only vector stores claim
  /// the alignment).
  static bool storesVectorsInto(const Stmt &body, const std::string &name) {
    struct FindVectorStore : IRVisitor {
      using IRVisitor::visit;
      const std::string &name;
      bool found = false;
      explicit FindVectorStore(const std::string &name) : name(name) {}
      void visit(const Store *store) override {
        found |= store->name == name && store->value.type().lanes() > 1;
        IRVisitor::visit(store);
      }
    } finder(name);
    body.accept(&finder);
    return finder.found;
  }

  Stmt visit(const Allocate *op) override {
    Stmt body = mutate(op->body);
    int32_t elements = op->constant_allocation_size();
    bool singleWord = elements > 0 && op->type.lanes() == 1 &&
                      int64_t(elements) * op->type.bytes() <= kWordBytes &&
                      !op->new_expr.defined() &&
                      storesVectorsInto(body, op->name);
    if (!singleWord)
      return body.same_as(op->body)
                 ? Stmt(op)
                 : Allocate::make(op->name, op->type, op->memory_type,
                                  op->extents, op->condition, body,
                                  op->new_expr, op->free_function, op->padding);
    int padded = 2 * kWordBytes / op->type.bytes();
    return Allocate::make(op->name, op->type, op->memory_type, {Expr(padded)},
                          op->condition, body, op->new_expr, op->free_function,
                          op->padding);
  }
};

/// The name of the runtime function an assert's message calls ("" if none).
std::string assertCallee(const AssertStmt *op) {
  const Call *call = op->message.as<Call>();
  return call ? call->name : "";
}

/// Halide's checks of a buffer's extents against what the pipeline reads
/// or writes; a requirement on the sizes says more than they do.
bool isExtentCheck(const AssertStmt *op) {
  static const std::set<std::string> kExtentChecks = {
      "halide_error_access_out_of_bounds",
      "halide_error_buffer_extents_negative",
      "halide_error_constraint_violated",
      "halide_error_buffer_allocation_too_large",
      "halide_error_buffer_extents_too_large"};
  return kExtentChecks.count(assertCallee(op)) != 0;
}

/// Finds the first extent check and the requirements after it that may
/// move there: every name a requirement's condition reads is either bound
/// nowhere in the body (a parameter) or by a let around the extent check.
class FindMovableRequirements : public IRVisitor {
  using IRVisitor::visit;

  std::vector<std::string> scope;
  std::map<std::string, int> bindings;
  std::vector<const AssertStmt *> requirements;
  std::set<std::string> scopeAtTarget;

  void visit(const LetStmt *op) override {
    op->value.accept(this);
    scope.push_back(op->name);
    ++bindings[op->name];
    op->body.accept(this);
    scope.pop_back();
  }
  void visit(const Let *op) override {
    ++bindings[op->name];
    IRVisitor::visit(op);
  }
  void visit(const For *op) override {
    ++bindings[op->name];
    IRVisitor::visit(op);
  }
  void visit(const AssertStmt *op) override {
    if (!target && isExtentCheck(op)) {
      target = op;
      scopeAtTarget.insert(scope.begin(), scope.end());
    } else if (target &&
               assertCallee(op) == "halide_error_requirement_failed") {
      requirements.push_back(op);
    }
    IRVisitor::visit(op);
  }

  bool readsOnlyNamesInScope(const AssertStmt *op) const {
    struct ReadNames : IRVisitor {
      using IRVisitor::visit;
      std::set<std::string> names;
      void visit(const Variable *var) override { names.insert(var->name); }
    } reads;
    op->condition.accept(&reads);
    op->message.accept(&reads);
    for (const std::string &name : reads.names) {
      auto bound = bindings.find(name);
      if (bound == bindings.end())
        continue;
      if (bound->second != 1 || !scopeAtTarget.count(name))
        return false;
    }
    return true;
  }

public:
  const AssertStmt *target = nullptr;

  std::vector<const AssertStmt *> movable() const {
    std::vector<const AssertStmt *> result;
    for (const AssertStmt *requirement : requirements)
      if (readsOnlyNamesInScope(requirement))
        result.push_back(requirement);
    return result;
  }
};

/// Moves the given requirements to just before the first extent check,
/// in their order.
class MoveRequirementsFirst : public IRMutator {
  using IRMutator::visit;

  const AssertStmt *target;
  std::vector<const AssertStmt *> moving;

  bool isMoving(const Stmt &s) const {
    const AssertStmt *op = s.as<AssertStmt>();
    return op && std::find(moving.begin(), moving.end(), op) != moving.end();
  }

  Stmt visit(const Block *op) override {
    if (isMoving(op->first))
      return mutate(op->rest);
    if (isMoving(op->rest))
      return mutate(op->first);
    return IRMutator::visit(op);
  }
  Stmt visit(const AssertStmt *op) override {
    if (isMoving(op))
      return Evaluate::make(0);
    if (op != target)
      return op;
    std::vector<Stmt> stmts(moving.begin(), moving.end());
    stmts.push_back(op);
    return Block::make(stmts);
  }

public:
  MoveRequirementsFirst(const AssertStmt *target,
                        std::vector<const AssertStmt *> moving)
      : target(target), moving(std::move(moving)) {}
};

/// Halide prints a failed requirement as "Requirement Failed: (<the
/// condition's value>) <message>", always "(false)"; this puts the
/// condition's text there instead.
class ShowRequirementConditions : public IRMutator {
  using IRMutator::visit;

  Stmt visit(const AssertStmt *op) override {
    const Call *call = op->message.as<Call>();
    if (!call || call->name != "halide_error_requirement_failed" ||
        call->args.size() != 2)
      return op;
    std::ostringstream printed;
    printed << op->condition;
    return AssertStmt::make(
        op->condition,
        Call::make(call->type, call->name,
                   {Expr(withoutOuterParens(printed.str())), call->args[1]},
                   call->call_type));
  }

  /// "(a == b)" -> "a == b" (the runtime adds its own), but "(a) || (b)"
  /// stays.
  static std::string withoutOuterParens(const std::string &text) {
    if (text.size() < 2 || text.front() != '(' || text.back() != ')')
      return text;
    int depth = 0;
    for (size_t i = 0; i + 1 < text.size(); ++i) {
      depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
      if (depth == 0)
        return text;
    }
    return text.substr(1, text.size() - 2);
  }
};

class RequirementsFirst : public IRMutator {
public:
  Stmt mutate(const Stmt &body) override {
    FindMovableRequirements finder;
    body.accept(&finder);
    std::vector<const AssertStmt *> moving = finder.movable();
    Stmt moved = finder.target && !moving.empty()
                     ? MoveRequirementsFirst(finder.target, moving).mutate(body)
                     : body;
    return ShowRequirementConditions().mutate(moved);
  }
  using IRMutator::mutate;
};

} // namespace

void mlir::attn::codegen::addRequirementsFirstFix(Halide::Pipeline &pipeline) {
  pipeline.add_custom_lowering_pass(new RequirementsFirst);
}

void mlir::attn::codegen::addSmallAllocationFix(Halide::Pipeline &pipeline) {
  pipeline.add_custom_lowering_pass(new PadSingleWordAllocations);
}

void mlir::attn::codegen::addPrefetchLoweringFix(Halide::Pipeline &pipeline) {
  pipeline.add_custom_lowering_pass(new FixSplitPrefetch);
}

void mlir::attn::codegen::addLaneReductionLoweringFix(
    Halide::Pipeline &pipeline) {
  pipeline.add_custom_lowering_pass(new ReduceLanesByHalves);
}
