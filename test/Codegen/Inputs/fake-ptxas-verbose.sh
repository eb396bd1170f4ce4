#!/bin/sh
# Stands in for ptxas in gpu-cuda-report-errors.test: prints ptxas -v output
# with non-zero shared memory and spills, for two entry functions and one
# device function, and checks it was called as `-v --gpu-name sm_XX IN -o OUT`.
# The first kernel's name ends in the GPU name, so tests see the arch.
[ "$1" = "-v" ] && [ "$2" = "--gpu-name" ] && [ "$6" != "" ] || exit 2
cat >&2 <<LOG
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'kernel_first_$3' for '$3'
ptxas info    : Function properties for kernel_first_$3
    16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, 1024 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function 'kernel_second' for '$3'
ptxas info    : Function properties for kernel_second
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Function properties for helper_device_function
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 7 registers, 360 bytes cmem[0]
LOG
