# Resolves JETPLAN_CUDA (AUTO/ON/OFF) into JETPLAN_WITH_CUDA. The runtime never links a CUDA
# library (it dlopens the driver); nvcc is only needed to compile kernels into fatbins.
set(JETPLAN_WITH_CUDA OFF)
if(NOT JETPLAN_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    enable_language(CUDA)
    set(JETPLAN_WITH_CUDA ON)
  elseif(JETPLAN_CUDA STREQUAL "ON")
    message(FATAL_ERROR "JETPLAN_CUDA=ON but no CUDA compiler (nvcc) was found; "
                        "install the CUDA toolkit or configure with -DJETPLAN_CUDA=OFF")
  endif()
endif()
message(STATUS "jetplan: CUDA toolchain ${JETPLAN_WITH_CUDA} (JETPLAN_CUDA=${JETPLAN_CUDA})")
