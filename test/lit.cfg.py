# -*- Python -*-
import os
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")
# fuzz/ holds the fuzzers' corpus, which ctest's fuzz-replay runs.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "Inputs", "unit",
                   "fuzz"]

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%examples", os.path.join(config.attn_src_root, "examples")))
config.substitutions.append(("%attn_src", config.attn_src_root))
config.substitutions.append(("%python", config.python_executable))
# The build tree and the CMake and Ninja of the project venv (CMake >= 3.28,
# from PyPI), for the test that installs attn and builds an app against it.
config.substitutions.append(("%attn_build", config.attn_obj_root))
# Features: the Python package is built (not in the sanitizer build, whose
# instrumented extension cannot load into Python); the sanitizer build.
if config.attn_python_package:
    config.available_features.add("python-package")
if config.attn_sanitize:
    config.available_features.add("sanitizer")
# The project venv's Python with the built attn package (python/) importable.
config.substitutions.append(
    ("%attn_python", "env PYTHONPATH=%s %s" % (
        os.path.join(config.attn_obj_root, "python"), config.python_executable)))
venv_bin = os.path.dirname(config.python_executable)
config.substitutions.append(("%cmake", os.path.join(venv_bin, "cmake")))
config.substitutions.append(("%ninja", os.path.join(venv_bin, "ninja")))

# HL_COMPILER_STACK_SIZE: scripts/test.sh --sanitize sets it (Halide then
# compiles without swapcontext, docs/reliability.md).
llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP",
                                     "HL_COMPILER_STACK_SIZE"])
# attn-compile reads the default tuning cache ($XDG_CACHE_HOME/attn/...):
# tests get an empty one of their own, never the user's tuned schedules.
config.environment["XDG_CACHE_HOME"] = os.path.join(config.test_exec_root, "xdg-cache")
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = [
    ToolSubst("attn-opt", unresolved="fatal"),
    ToolSubst("attn-run", unresolved="fatal"),
    ToolSubst("attn-compile", unresolved="fatal"),
    ToolSubst("attn-lsp-server", unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, [config.attn_tools_dir, config.llvm_tools_dir])

# Features tests can REQUIRE honestly.
if os.path.exists("/etc/OpenCL/vendors") and os.listdir("/etc/OpenCL/vendors"):
    config.available_features.add("opencl")
if os.path.exists("/usr/local/cuda/bin/ptxas"):
    config.available_features.add("cuda-toolkit")
# An AVX-512 CPU (bench/hand's yardsticks are written in its intrinsics).
try:
    with open("/proc/cpuinfo") as cpuinfo:
        if "avx512f" in cpuinfo.read().split():
            config.available_features.add("avx512-host")
except OSError:
    pass
# perf can sample a process here as bench/loop_profile.py does: installed,
# and allowed by kernel.perf_event_paranoid to sample the software
# cpu-clock event.
try:
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-o", "/dev/null", "true"],
                   check=True, capture_output=True, timeout=60)
    config.available_features.add("perf")
except Exception:
    pass
# Halide's runtime headers (HalideRuntime.h, HalideRuntimeCuda.h), for apps
# built in tests.
try:
    halide_dir = subprocess.run(
        [config.python_executable, "-c", "import halide; print(halide.install_dir())"],
        check=True, capture_output=True, text=True, timeout=60).stdout.strip()
    config.substitutions.append(("%halide_include", os.path.join(halide_dir, "include")))
except Exception:
    pass
# numpy must be importable by %python (the project venv), which need not be
# the interpreter running lit.
try:
    subprocess.run([config.python_executable, "-c", "import numpy"],
                   check=True, capture_output=True, timeout=60)
    config.available_features.add("numpy")
except Exception:
    pass
