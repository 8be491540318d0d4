#include "runtime/src/cuda/cuda_modules.h"

#include <cstdio>

#include "kernels/cuda/embedded.h"

namespace jetplan::rt::cu {

Modules::~Modules() {
  if (driver_ == nullptr) return;
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (modules_[i] != nullptr) (void)driver_->ModuleUnload(modules_[i]);
  }
}

Status Modules::load(const Driver& d) {
  if (jp_embedded_module_count <= 0) {
    return fail(JP_ERROR_UNSUPPORTED,
                "this libjetplan was built without CUDA kernels (no nvcc at build time); "
                "rebuild it with -DJETPLAN_CUDA=ON to run GPU plans");
  }
  if (!modules_.allocate(static_cast<size_t>(jp_embedded_module_count))) {
    return fail(JP_ERROR_OUT_OF_MEMORY, "out of memory for the CUDA module table");
  }
  driver_ = &d;
  for (int i = 0; i < jp_embedded_module_count; ++i) {
    const jp_embedded_module& m = jp_embedded_modules[i];
    char what[96];
    std::snprintf(what, sizeof(what), "loading the CUDA module '%s' (%zu bytes)", m.name,
                  static_cast<size_t>(m.end - m.begin));
    JP_RETURN_IF_ERROR(check(d, d.ModuleLoadData(&modules_[static_cast<size_t>(i)], m.begin), what));
  }
  return JP_OK;
}

Status Modules::function(const char* name, CUfunction* out) const {
  for (size_t i = 0; i < modules_.size(); ++i) {
    if (modules_[i] != nullptr && driver_->ModuleGetFunction(out, modules_[i], name) == kSuccess) {
      return JP_OK;
    }
  }
  return fail(JP_ERROR_UNSUPPORTED, "no CUDA kernel named '%s' in this libjetplan", name);
}

}  // namespace jetplan::rt::cu
