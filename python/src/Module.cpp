//===- Module.cpp - The attn._attn Python extension ------------------------===//
//
// nanobind bindings of SpecKernel (python/src/SpecKernel.h). Arrays arrive
// through DLPack or the buffer protocol (torch tensors, numpy arrays) and
// reach the kernel as pointers: no copy. This file checks what the kernel
// cannot: the device, the element type and the layout of each array.
//
//===----------------------------------------------------------------------===//

#include "SpecKernel.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <stdexcept>

namespace nb = nanobind;
using namespace attn::python;

namespace {

/// attn.Error: every failure of compiling or running a kernel.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char *typeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "float32";
  case ElementType::F64:
    return "float64";
  case ElementType::BF16:
    return "bfloat16";
  case ElementType::F16:
    return "float16";
  }
  return "?";
}

std::string dtypeName(nb::dlpack::dtype dtype) {
  std::string kind;
  switch (static_cast<nb::dlpack::dtype_code>(dtype.code)) {
  case nb::dlpack::dtype_code::Float:
    kind = "float";
    break;
  case nb::dlpack::dtype_code::Bfloat:
    kind = "bfloat";
    break;
  case nb::dlpack::dtype_code::Int:
    kind = "int";
    break;
  case nb::dlpack::dtype_code::UInt:
    kind = "uint";
    break;
  case nb::dlpack::dtype_code::Bool:
    return "bool";
  default:
    kind = "complex";
  }
  return kind + std::to_string(dtype.bits) +
         (dtype.lanes > 1 ? "x" + std::to_string(dtype.lanes) : "");
}

bool hasType(nb::dlpack::dtype dtype, ElementType type) {
  if (dtype.lanes != 1)
    return false;
  auto code = static_cast<nb::dlpack::dtype_code>(dtype.code);
  switch (type) {
  case ElementType::F32:
    return code == nb::dlpack::dtype_code::Float && dtype.bits == 32;
  case ElementType::F64:
    return code == nb::dlpack::dtype_code::Float && dtype.bits == 64;
  case ElementType::F16:
    return code == nb::dlpack::dtype_code::Float && dtype.bits == 16;
  case ElementType::BF16:
    return code == nb::dlpack::dtype_code::Bfloat && dtype.bits == 16;
  }
  return false;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::string text = "(";
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? ", " : "") +
            (shape[d] < 0 ? std::string("?") : std::to_string(shape[d]));
  return text + (shape.size() == 1 ? ",)" : ")");
}

/// The memory of `array`, bound to `info` (what: "argument" or "output"),
/// after checking what SpecKernel cannot see.
template <typename Array>
View viewOf(const Array &array, const TensorInfo &info, const char *what,
            const std::string &func) {
  std::string which = std::string(what) + " '" + info.name + "' of @" + func;
  if (array.device_type() != nb::device::cpu::value)
    throw Error(which + " is not in host memory: attn kernels take CPU "
                        "tensors (DLPack device type " +
                std::to_string(array.device_type()) + ")");
  if (!hasType(array.dtype(), info.type))
    throw Error(which + " must be " + typeName(info.type) + ", got " +
                dtypeName(array.dtype()));
  // Inputs arrive read-only; the kernel never writes them.
  View view{const_cast<void *>(static_cast<const void *>(array.data())), {}};
  for (size_t d = 0; d < array.ndim(); ++d)
    view.shape.push_back(static_cast<int64_t>(array.shape(d)));
  // Dense row-major: each stride is the product of the inner extents
  // (any stride will do along a dim of extent 1).
  int64_t dense = 1;
  for (size_t d = array.ndim(); d-- > 0;) {
    if (view.shape[d] != 1 && array.stride(d) != dense)
      throw Error(which + " is not contiguous (strides do not describe a "
                          "dense row-major array of shape " +
                  shapeText(view.shape) +
                  "): pass x.contiguous() or numpy.ascontiguousarray(x)");
    dense *= view.shape[d];
  }
  return view;
}

nb::list describe(const std::vector<TensorInfo> &infos) {
  nb::list list;
  for (const TensorInfo &info : infos) {
    nb::list shape;
    for (int64_t size : info.shape)
      shape.append(size < 0 ? nb::object(nb::none()) : nb::int_(size));
    list.append(nb::make_tuple(info.name, nb::tuple(shape),
                               typeName(info.type)));
  }
  return list;
}

} // namespace

NB_MODULE(_attn, m) {
  m.doc() = "attn's compiler and kernels (use the attn package, not this "
            "module)";
  nb::exception<Error>(m, "Error", PyExc_ValueError);
  // Kernels registered as torch ops live in torch's registry until the
  // interpreter exits: that is not a leak worth a warning.
  nb::set_leak_warnings(false);

  nb::class_<SpecKernel>(m, "NativeKernel")
      .def_prop_ro("name", &SpecKernel::name)
      .def_prop_ro("arguments",
                   [](const SpecKernel &k) { return describe(k.arguments()); })
      .def_prop_ro("results",
                   [](const SpecKernel &k) { return describe(k.results()); })
      .def_prop_ro("differentiable", &SpecKernel::differentiable)
      .def_prop_ro("saved_statistics", &SpecKernel::savedStatistics)
      .def("result_shapes",
           [](SpecKernel &k, const std::vector<std::vector<int64_t>> &shapes) {
             std::vector<std::vector<int64_t>> results;
             std::string error;
             if (!k.resultShapes(shapes, results, error))
               throw Error(error);
             return results;
           })
      .def("run",
           [](SpecKernel &k, const std::vector<nb::ndarray<nb::ro>> &inputs,
              const std::vector<nb::ndarray<>> &outputs) {
             if (inputs.size() != k.arguments().size())
               throw Error("@" + k.name() + " takes " +
                           std::to_string(k.arguments().size()) +
                           " arguments, got " + std::to_string(inputs.size()));
             if (outputs.size() != k.results().size())
               throw Error("@" + k.name() + " has " +
                           std::to_string(k.results().size()) +
                           " results, got " + std::to_string(outputs.size()) +
                           " outputs");
             std::vector<View> in, out;
             for (size_t i = 0; i < inputs.size(); ++i)
               in.push_back(
                   viewOf(inputs[i], k.arguments()[i], "argument", k.name()));
             for (size_t i = 0; i < outputs.size(); ++i)
               out.push_back(
                   viewOf(outputs[i], k.results()[i], "output", k.name()));
             std::string error;
             bool ran;
             {
               nb::gil_scoped_release unlocked;
               ran = k.run(in, out, error);
             }
             if (!ran)
               throw Error(error);
           });

  m.def(
      "compile",
      [](const std::string &spec, const std::string &specName,
         const std::string &func, const std::string &target, bool aot,
         bool grad, bool saveStatistics, const std::string &passPipeline,
         bool runPipeline, const std::string &tuningCache,
         const std::string &autoscheduler,
         const std::vector<std::string> &scheduleParams,
         const std::vector<std::vector<int64_t>> &shapeEstimates) {
        CompileRequest request{spec,           specName,    func,
                               target,         aot,         grad,
                               saveStatistics, passPipeline, runPipeline,
                               tuningCache,    autoscheduler, scheduleParams,
                               shapeEstimates};
        std::unique_ptr<SpecKernel> kernel;
        std::string error;
        {
          nb::gil_scoped_release unlocked;
          kernel = SpecKernel::compile(request, error);
        }
        if (!kernel)
          throw Error(error);
        return kernel;
      },
      nb::arg("spec"), nb::arg("spec_name"), nb::arg("func"),
      nb::arg("target"), nb::arg("aot"), nb::arg("grad"),
      nb::arg("save_statistics"), nb::arg("pass_pipeline"), nb::arg("run_pipeline"),
      nb::arg("tuning_cache"), nb::arg("autoscheduler"),
      nb::arg("schedule_params"), nb::arg("shape_estimates"));
}
