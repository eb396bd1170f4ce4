# `cmake --install build --prefix P` (docs/install.md): the tools, the Python
# package (P/lib/python/attn), the reference runtime (library and headers),
# the headers of the api/ and codegen/ layers (and the dialect and pass
# headers they include), Halide's shared library, autoscheduler plugins and
# runtime headers (what the tools and generated kernels need), the docs, and
# the CMake package P/lib/cmake/attn (attnConfig.cmake, its version file and
# attn_add_kernel), so that a project outside this tree can
#   find_package(attn)   # with CMAKE_PREFIX_PATH=P
#   attn_add_kernel(NAME k SPEC spec.mlir FUNC f)
include(CMakePackageConfigHelpers)

set(ATTN_TOOLS attn-opt attn-run attn-compile attn-lsp-server)
# The installed tools find libHalide (and its plugins) in P/lib, LLVM where
# it was found at build time (Debian's /usr/lib/llvm-22/lib).
set_target_properties(${ATTN_TOOLS} PROPERTIES
  INSTALL_RPATH "\$ORIGIN/../lib;${LLVM_LIBRARY_DIR}")
install(TARGETS ${ATTN_TOOLS} RUNTIME DESTINATION bin)
install(TARGETS AttnRuntime ARCHIVE DESTINATION lib)
# The compiler's library layers (attn::compiler; add_mlir_library installs
# AttnDialect, AttnPasses and AttnApiCore itself).
install(TARGETS AttnCodegen AttnApi ARCHIVE DESTINATION lib)

file(GLOB attn_halide_libraries
     "${ATTN_HALIDE_INSTALL_DIR}/lib64/libHalide.so*"
     "${ATTN_HALIDE_INSTALL_DIR}/lib64/libautoschedule_*.so"
     "${ATTN_HALIDE_INSTALL_DIR}/lib/libHalide.so*"
     "${ATTN_HALIDE_INSTALL_DIR}/lib/libautoschedule_*.so")
install(FILES ${attn_halide_libraries} DESTINATION lib)
# Generated kernel headers include HalideRuntime.h; apps use HalideBuffer.h.
file(GLOB attn_halide_runtime_headers
     "${ATTN_HALIDE_INSTALL_DIR}/include/HalideRuntime*.h"
     "${ATTN_HALIDE_INSTALL_DIR}/include/HalideBuffer.h")
install(FILES ${attn_halide_runtime_headers} DESTINATION include/attn/halide)

# Headers keep their folders (#include "runtime/Npy.h", "api/Run.h"), with
# the TableGen output the dialect and pass headers include.
install(DIRECTORY runtime api codegen dialect passes DESTINATION include/attn
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY "${PROJECT_BINARY_DIR}/dialect" "${PROJECT_BINARY_DIR}/passes"
        DESTINATION include/attn FILES_MATCHING PATTERN "*.h.inc")

install(DIRECTORY docs/ DESTINATION share/doc/attn FILES_MATCHING PATTERN "*.md")
install(FILES README.md DESTINATION share/doc/attn)

write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/attnConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
# Where the MLIR that attn::compiler links was found at build time.
file(WRITE "${PROJECT_BINARY_DIR}/attnBuildPaths.cmake"
     "set(ATTN_MLIR_DIR \"${MLIR_DIR}\")\n")
install(FILES cmake/attnConfig.cmake cmake/AttnKernel.cmake
              "${PROJECT_BINARY_DIR}/attnConfigVersion.cmake"
              "${PROJECT_BINARY_DIR}/attnBuildPaths.cmake"
        DESTINATION lib/cmake/attn)

# The Python package (docs/python.md): PYTHONPATH=P/lib/python.
if(TARGET _attn)
  install(TARGETS _attn LIBRARY DESTINATION lib/python/attn)
  install(DIRECTORY python/attn/ DESTINATION lib/python/attn
          FILES_MATCHING PATTERN "*.py")
endif()
