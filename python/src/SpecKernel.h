//===- SpecKernel.h - A spec function compiled for Python ------*- C++ -*-===//
//
// The boundary between the Python module (python/src/Module.cpp, built with
// RTTI as nanobind needs) and attn's libraries (built without RTTI, like
// LLVM): plain C++ types only, no MLIR or LLVM header, so no LLVM class is
// ever seen by an RTTI translation unit. Calls report failure by returning
// false with the error text (diagnostics at <spec>:line:col included).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_PYTHON_SPECKERNEL_H
#define ATTN_PYTHON_SPECKERNEL_H

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace attn::python {

/// The element types of spec tensors.
enum class ElementType { F32, F64, BF16, F16 };

/// An argument or result of the compiled function: its source name, its
/// shape (-1 for a dynamic dim) and element type.
struct TensorInfo {
  std::string name;
  std::vector<int64_t> shape;
  ElementType type;
};

struct CompileRequest {
  std::string specText;
  std::string specName = "<spec>"; ///< names the spec in diagnostics
  std::string func;                ///< "": the only function with a body
  std::string target = "host";
  bool aot = false;  ///< ahead of time (static library, linked, loaded)
  bool grad = false; ///< compile @func_grad (--attn-grad) instead
  /// --attn-grad=save-statistics=1: @func also returns the row log-sum-exp
  /// of its fused softmax attention ops, and @func_grad takes them after
  /// the cotangents (docs/training.md, "Saved statistics").
  bool saveStatistics = false;
  std::string passPipeline; ///< "": attn-default-pipeline
  bool runPipeline = true;
  std::string tuningCache;
  std::string autoscheduler;
  std::vector<std::string> scheduleParams; ///< "group.name=value"
  /// Shapes the schedule is chosen for (one per argument); empty: the
  /// argument types (256 for dynamic dims).
  std::vector<std::vector<int64_t>> shapeEstimates;
};

/// Memory the caller owns: a dense row-major array of `shape`.
struct View {
  void *data = nullptr;
  std::vector<int64_t> shape;
};

class SpecKernel {
public:
  /// Parses, verifies and compiles; nullptr and `error` on failure.
  static std::unique_ptr<SpecKernel> compile(const CompileRequest &request,
                                             std::string &error);
  ~SpecKernel();

  /// The compiled function's symbol name (@f, or @f_grad).
  const std::string &name() const { return funcName; }
  const std::vector<TensorInfo> &arguments() const { return args; }
  const std::vector<TensorInfo> &results() const { return outs; }
  /// The arguments of @f that have a gradient (not {attn.no_grad}), in
  /// order: for a gradient kernel, result i is the gradient of argument
  /// differentiable()[i] of @f.
  const std::vector<int> &differentiable() const { return gradArgs; }
  /// The trailing results that are saved statistics (a forward compiled
  /// with saveStatistics), 0 otherwise.
  unsigned savedStatistics() const { return saved; }

  bool resultShapes(const std::vector<std::vector<int64_t>> &inputShapes,
                    std::vector<std::vector<int64_t>> &shapes,
                    std::string &error);
  /// Runs once on `inputs`, writing `outputs` in place. The caller has
  /// checked element types; shapes are checked here.
  bool run(const std::vector<View> &inputs, const std::vector<View> &outputs,
           std::string &error);

private:
  SpecKernel();
  struct State;
  std::unique_ptr<State> state;
  std::string funcName;
  std::vector<TensorInfo> args, outs;
  std::vector<int> gradArgs;
  unsigned saved = 0;
};

} // namespace attn::python

#endif // ATTN_PYTHON_SPECKERNEL_H
