# Resolves JETPLAN_CUDA (AUTO/ON/OFF) into JETPLAN_WITH_CUDA and JETPLAN_NVCC. The runtime never
# links a CUDA library (it dlopens the driver), and no CUDA host code is compiled: nvcc only
# compiles kernels/cuda/*.cu into fatbins (device code), which are embedded with .incbin. So the
# build host's nvcc serves cross builds too (the Jetson's aarch64 library gets the same fatbins:
# device code does not depend on the host's architecture).
set(JETPLAN_WITH_CUDA OFF)
if(NOT JETPLAN_CUDA STREQUAL "OFF")
  find_program(JETPLAN_NVCC nvcc HINTS ENV CUDA_PATH /usr/local/cuda PATH_SUFFIXES bin
               NO_CMAKE_FIND_ROOT_PATH)
  if(JETPLAN_NVCC)
    set(JETPLAN_WITH_CUDA ON)
  elseif(JETPLAN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "JETPLAN_CUDA=ON but no CUDA compiler (nvcc) was found; "
                        "install the CUDA toolkit or configure with -DJETPLAN_CUDA=OFF")
  endif()
endif()
message(STATUS "jetplan: CUDA kernels ${JETPLAN_WITH_CUDA} (JETPLAN_CUDA=${JETPLAN_CUDA}, nvcc ${JETPLAN_NVCC})")
