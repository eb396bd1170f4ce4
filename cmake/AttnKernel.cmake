# attn_add_kernel(NAME <target> SPEC <spec.mlir> FUNC <func> [TARGET <halide>]
#                 [GRAD])
#
# Compiles func.func @<func> of <spec.mlir> with attn-compile at build time
# and makes <target> a static library to link: it carries the include
# directory of <func>.h and links the Halide runtime for <halide> (one
# shared runtime library per Halide target, however many kernels an app
# has). TARGET defaults to "host". With GRAD, the gradient @<func>_grad
# (attn-compile --grad, docs/training.md) is compiled too and <target>
# carries <func>_grad.a and <func>_grad.h as well.
#
#   attn_add_kernel(NAME my_attention SPEC attention.mlir FUNC attention)
#   target_link_libraries(my_app PRIVATE my_attention)
#   // #include "attention.h"; attention(q_buf, k_buf, v_buf, out_buf);
#
# The same file serves attn's own build (attn-compile is a target of it) and
# the installed CMake package (find_package(attn), attnConfig.cmake), which
# sets ATTN_COMPILE to the imported attn::attn-compile and
# ATTN_HALIDE_RUNTIME to its copy of Halide's runtime headers.
if(NOT DEFINED ATTN_COMPILE)
  set(ATTN_COMPILE attn-compile)
endif()
if(NOT DEFINED ATTN_HALIDE_RUNTIME)
  set(ATTN_HALIDE_RUNTIME Halide::Runtime)
endif()

# The runtime of one Halide target: attn_runtime_<sanitized target>.
function(attn_add_runtime out_target halide_target)
  string(MAKE_C_IDENTIFIER "${halide_target}" suffix)
  set(name attn_runtime_${suffix})
  set(${out_target} ${name} PARENT_SCOPE)
  if(TARGET ${name})
    return()
  endif()
  set(dir "${CMAKE_BINARY_DIR}/attn_kernels/runtime_${suffix}")
  add_custom_command(
    OUTPUT "${dir}/attn_runtime.a"
    COMMAND ${ATTN_COMPILE} --runtime-only -o "${dir}" --target ${halide_target}
    DEPENDS ${ATTN_COMPILE}
    COMMENT "attn-compile: Halide runtime for ${halide_target}"
    VERBATIM)
  add_custom_target(${name}_generate DEPENDS "${dir}/attn_runtime.a")
  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES
    IMPORTED_LOCATION "${dir}/attn_runtime.a")
  find_package(Threads REQUIRED)
  target_link_libraries(${name} INTERFACE ${ATTN_HALIDE_RUNTIME} Threads::Threads
                        ${CMAKE_DL_LIBS})
  add_dependencies(${name} ${name}_generate)
endfunction()

function(attn_add_kernel)
  cmake_parse_arguments(ARG "GRAD" "NAME;SPEC;FUNC;TARGET" "" ${ARGN})
  foreach(required NAME SPEC FUNC)
    if(NOT ARG_${required})
      message(FATAL_ERROR "attn_add_kernel: ${required} is required")
    endif()
  endforeach()
  if(NOT ARG_TARGET)
    set(ARG_TARGET host)
  endif()
  get_filename_component(spec "${ARG_SPEC}" ABSOLUTE)
  set(dir "${CMAKE_CURRENT_BINARY_DIR}/attn_kernels/${ARG_NAME}")
  file(MAKE_DIRECTORY "${dir}")
  set(outputs "${dir}/${ARG_FUNC}.a" "${dir}/${ARG_FUNC}.h")
  set(grad_flag)
  if(ARG_GRAD)
    list(APPEND outputs "${dir}/${ARG_FUNC}_grad.a" "${dir}/${ARG_FUNC}_grad.h")
    set(grad_flag --grad)
  endif()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND ${ATTN_COMPILE} "${spec}" -o "${dir}" --func ${ARG_FUNC}
            --target ${ARG_TARGET} --no-runtime ${grad_flag}
    DEPENDS ${ATTN_COMPILE} "${spec}"
    COMMENT "attn-compile: @${ARG_FUNC} of ${ARG_SPEC} for ${ARG_TARGET}"
    VERBATIM)
  add_custom_target(${ARG_NAME}_generate DEPENDS ${outputs})
  attn_add_runtime(runtime ${ARG_TARGET})
  add_library(${ARG_NAME} STATIC IMPORTED GLOBAL)
  set_target_properties(${ARG_NAME} PROPERTIES
    IMPORTED_LOCATION "${dir}/${ARG_FUNC}.a"
    INTERFACE_INCLUDE_DIRECTORIES "${dir}")
  set(links ${runtime})
  if(ARG_GRAD)
    set(links "${dir}/${ARG_FUNC}_grad.a" ${runtime})
  endif()
  target_link_libraries(${ARG_NAME} INTERFACE ${links})
  add_dependencies(${ARG_NAME} ${ARG_NAME}_generate)
endfunction()
