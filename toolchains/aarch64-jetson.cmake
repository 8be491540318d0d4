# Cross-compile libjetplan, jetplan-run and the examples for Jetson (aarch64 Linux, L4T).
#
#   cmake -S . -B build-jetson -DCMAKE_TOOLCHAIN_FILE=toolchains/aarch64-jetson.cmake \
#         -DJETPLAN_CONVERTER=OFF -DJETPLAN_TESTS=OFF
#
# The runtime links no CUDA library (it loads the driver at run time), so a plain aarch64 g++ is
# enough: on Debian, `apt-get install g++-aarch64-linux-gnu`. flatc and nvcc run on the build
# host.
# JETPLAN_SYSROOT may point at a copy of the Jetson's root file system (for libstb, say).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)

set(JETPLAN_CROSS_PREFIX "aarch64-linux-gnu-" CACHE STRING "Cross compiler prefix")
set(CMAKE_C_COMPILER ${JETPLAN_CROSS_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${JETPLAN_CROSS_PREFIX}g++)
# Orin (Cortex-A78AE) and Thor (Neoverse V3AE) both run ARMv8.2-A code.
set(CMAKE_C_FLAGS_INIT "-march=armv8.2-a")
set(CMAKE_CXX_FLAGS_INIT "-march=armv8.2-a")

if(DEFINED JETPLAN_SYSROOT)
  set(CMAKE_SYSROOT ${JETPLAN_SYSROOT})
endif()
# Headers-only host packages (flatbuffers) are found on the host; libraries and programs for the
# target only in the target's root; flatc, a host program, on the host.
set(CMAKE_FIND_ROOT_PATH ${JETPLAN_SYSROOT} /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE BOTH)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Kernels for the Jetson GPUs: the build host's nvcc compiles them (device code only, see
# cmake/cuda.cmake) and they are embedded in the aarch64 library like in any other build.
set(JETPLAN_CUDA_ARCHS "87;110" CACHE STRING "Orin and Thor")
