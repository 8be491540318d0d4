// The kernels embedded in libjetplan (kernels/cuda/embedded.h), loaded into the current CUDA
// context: one module per family fatbin, looked up by kernel name.
#pragma once

#include "runtime/src/cuda/cuda_driver.h"
#include "runtime/src/api/memory.h"

namespace jetplan::rt::cu {

class Modules {
 public:
  Modules() = default;
  Modules(const Modules&) = delete;
  Modules& operator=(const Modules&) = delete;
  ~Modules();

  // Loads every embedded module into the calling thread's current context. JP_ERROR_UNSUPPORTED
  // when this libjetplan was built without CUDA kernels, JP_ERROR_DEVICE naming the module the
  // driver rejects (no code for this GPU's SM).
  [[nodiscard]] Status load(const Driver& d);
  // JP_ERROR_UNSUPPORTED naming the kernel when no module has it.
  [[nodiscard]] Status function(const char* name, CUfunction* out) const;

 private:
  const Driver* driver_ = nullptr;
  Array<CUmodule> modules_;
};

}  // namespace jetplan::rt::cu
