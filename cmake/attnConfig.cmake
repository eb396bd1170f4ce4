# attn's CMake package (installed by `cmake --install`, docs/install.md).
#
#   find_package(attn 0.9 REQUIRED)      # CMAKE_PREFIX_PATH=<prefix>
#   attn_add_kernel(NAME my_attention SPEC attention.mlir FUNC attention)
#   target_link_libraries(my_app PRIVATE my_attention attn::runtime)
#   target_link_libraries(my_tool PRIVATE attn::compiler)  # compile at run time
#
# Imported targets:
#   attn::attn-compile, attn::attn-opt, attn::attn-run, attn::attn-lsp-server
#                          the tools
#   attn::runtime          the reference runtime (runtime/*.h: tensors, .npy
#                          files, the f64 reference kernels; no MLIR)
#   attn::halide_runtime   Halide's runtime headers (HalideRuntime.h, which
#                          generated kernel headers include; HalideBuffer.h)
#   attn::compiler         the compiler as a library (api/, codegen/,
#                          passes/, dialect/ headers): open, compile and run
#                          specs in your process as the tools do; links
#                          MLIR 22 (found where attn was built) and libHalide
# and the function attn_add_kernel (AttnKernel.cmake has its arguments).
get_filename_component(ATTN_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

foreach(tool attn-compile attn-opt attn-run attn-lsp-server)
  if(NOT TARGET attn::${tool})
    add_executable(attn::${tool} IMPORTED)
    set_target_properties(attn::${tool} PROPERTIES
      IMPORTED_LOCATION "${ATTN_PREFIX}/bin/${tool}")
  endif()
endforeach()

if(NOT TARGET attn::runtime)
  add_library(attn::runtime STATIC IMPORTED)
  set_target_properties(attn::runtime PROPERTIES
    IMPORTED_LOCATION "${ATTN_PREFIX}/lib/libAttnRuntime.a"
    INTERFACE_INCLUDE_DIRECTORIES "${ATTN_PREFIX}/include/attn"
    INTERFACE_COMPILE_FEATURES cxx_std_17)
endif()

if(NOT TARGET attn::halide_runtime)
  add_library(attn::halide_runtime INTERFACE IMPORTED)
  set_target_properties(attn::halide_runtime PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${ATTN_PREFIX}/include/attn/halide")
endif()

if(NOT TARGET attn::compiler)
  include("${CMAKE_CURRENT_LIST_DIR}/attnBuildPaths.cmake")
  find_package(MLIR CONFIG QUIET HINTS "${ATTN_MLIR_DIR}")
  if(MLIR_FOUND)
    add_library(attn::compiler INTERFACE IMPORTED)
    set(attn_compiler_libraries)
    # Static libraries, users before what they use.
    foreach(library AttnApi AttnCodegen AttnApiCore AttnPasses AttnDialect)
      list(APPEND attn_compiler_libraries
           "${ATTN_PREFIX}/lib/lib${library}.a")
    endforeach()
    list(APPEND attn_compiler_libraries attn::runtime
         MLIRAsmParser MLIRFuncDialect MLIRArithDialect MLIRSCFDialect
         MLIRTensorDialect MLIRTransforms MLIRPass MLIRIR MLIRSupport
         "${ATTN_PREFIX}/lib/libHalide.so" ${CMAKE_DL_LIBS})
    set_target_properties(attn::compiler PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES
        "${ATTN_PREFIX}/include/attn;${MLIR_INCLUDE_DIRS};${LLVM_INCLUDE_DIRS}"
      INTERFACE_LINK_LIBRARIES "${attn_compiler_libraries}"
      # Built like LLVM: without RTTI.
      INTERFACE_COMPILE_OPTIONS "-fno-rtti"
      INTERFACE_COMPILE_FEATURES cxx_std_17)
  endif()
endif()

set(ATTN_COMPILE attn::attn-compile)
set(ATTN_HALIDE_RUNTIME attn::halide_runtime)
include("${CMAKE_CURRENT_LIST_DIR}/AttnKernel.cmake")
set(attn_FOUND TRUE)
