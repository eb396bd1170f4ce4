# Fails when a committed reference in docs/ differs from what mlir-tblgen
# generates from the current .td files. Fix: `ninja -C build attn-update-docs`.
foreach(generated committed IN ZIP_LISTS GENERATED COMMITTED)
  file(READ "${generated}" want)
  file(READ "${committed}" have)
  if(NOT want STREQUAL have)
    message(FATAL_ERROR "${committed} is stale; run `ninja -C build attn-update-docs`")
  endif()
endforeach()
message(STATUS "docs in sync")
