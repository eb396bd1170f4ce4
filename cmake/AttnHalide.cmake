# Finds Halide 21 in the project venv (pip package `halide`), the one place
# the build learns where Halide lives. Included from the top level so the
# imported targets (Halide::Halide, Halide::Runtime) are visible everywhere.
if(NOT Python3_EXECUTABLE)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
endif()
execute_process(
  COMMAND "${Python3_EXECUTABLE}" -c "import halide; print(halide.install_dir())"
  OUTPUT_VARIABLE ATTN_HALIDE_INSTALL_DIR
  OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE attn_halide_result)
if(NOT attn_halide_result EQUAL 0)
  message(FATAL_ERROR "attn: `${Python3_EXECUTABLE} -c 'import halide'` failed; "
                      "run scripts/setup.sh (it installs Halide into .venv)")
endif()
find_package(Halide 21 REQUIRED CONFIG
             PATHS "${ATTN_HALIDE_INSTALL_DIR}/lib64/cmake/Halide"
                   "${ATTN_HALIDE_INSTALL_DIR}/lib/cmake/Halide"
             NO_DEFAULT_PATH)
message(STATUS "Using Halide ${Halide_VERSION} from ${ATTN_HALIDE_INSTALL_DIR}")

# Halide's autoscheduler plugins (libautoschedule_<name>.so) ship beside
# libHalide in the wheel; their folder becomes codegen's default plugin
# directory (ATTN_AUTOSCHEDULER_DIR overrides it at run time).
find_file(ATTN_HALIDE_ADAMS2019_PLUGIN libautoschedule_adams2019.so
          PATHS "${ATTN_HALIDE_INSTALL_DIR}/lib64" "${ATTN_HALIDE_INSTALL_DIR}/lib"
          NO_DEFAULT_PATH NO_CACHE)
if(ATTN_HALIDE_ADAMS2019_PLUGIN)
  get_filename_component(ATTN_HALIDE_PLUGIN_DIR "${ATTN_HALIDE_ADAMS2019_PLUGIN}" DIRECTORY)
  message(STATUS "Halide autoscheduler plugins: ${ATTN_HALIDE_PLUGIN_DIR}")
else()
  set(ATTN_HALIDE_PLUGIN_DIR "")
  message(WARNING "attn: no Halide autoscheduler plugins next to libHalide; "
                  "set ATTN_AUTOSCHEDULER_DIR at run time to use them")
endif()
