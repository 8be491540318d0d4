// The op schemas shape inference sees. libonnx 1.12's conv and pool inference functions trust
// values a damaged or hostile model can break: a stride of 0 divides by zero, a Conv whose weight
// rank differs from its input's reads out of bounds. This registry hands out every schema as
// libonnx has it, except that ops with window attributes (kernel_shape, strides, dilations,
// pads) check them, and conv ops their weight rank, before their inference function runs.
#pragma once

#include <onnx/defs/schema.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace jetplan::converter {

class InferenceSchemas final : public onnx::ISchemaRegistry {
 public:
  // The schema is owned by this registry or by libonnx's and lives as long as this registry.
  const onnx::OpSchema* GetSchema(const std::string& op, int max_version,
                                  const std::string& domain) const override;

 private:
  mutable std::map<std::tuple<std::string, std::string, int>, std::unique_ptr<onnx::OpSchema>>
      guarded_;
};

}  // namespace jetplan::converter
