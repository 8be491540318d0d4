#include "converter/src/onnx_schemas.h"

#include <onnx/defs/shape_inference.h>

#include <cstdint>
#include <string>

namespace jetplan::converter {
namespace {

bool is_conv(const std::string& op) {
  return op == "Conv" || op == "ConvInteger" || op == "QLinearConv" || op == "ConvTranspose";
}

bool has_window(const onnx::OpSchema& schema) {
  const auto& attrs = schema.attributes();
  return attrs.count("kernel_shape") || attrs.count("strides") || attrs.count("dilations");
}

// Window attributes a conv or pool inference function divides by, indexes with or adds up.
void check_window(onnx::InferenceContext& ctx) {
  constexpr int64_t kMax = int64_t{1} << 31;
  for (const char* name : {"kernel_shape", "strides", "dilations", "pads"}) {
    const onnx::AttributeProto* a = ctx.getAttribute(name);
    if (a == nullptr) continue;
    const int64_t low = std::string(name) == "pads" ? 0 : 1;
    for (int64_t v : a->ints())
      if (v < low || v > kMax)
        fail_shape_inference("attribute ", name, " holds ", v, ", outside [", low, ", 2^31]");
  }
}

// The weight's rank must be the input's: libonnx takes the kernel rank from the weight and the
// dilation count from the input.
void check_weight_rank(onnx::InferenceContext& ctx, size_t weight) {
  if (ctx.getNumInputs() <= weight || !onnx::hasInputShape(ctx, 0) ||
      !onnx::hasInputShape(ctx, weight))
    return;
  const int x = ctx.getInputType(0)->tensor_type().shape().dim_size();
  const int w = ctx.getInputType(weight)->tensor_type().shape().dim_size();
  if (x != w) fail_shape_inference("input rank ", x, " and weight rank ", w, " differ");
}

}  // namespace

const onnx::OpSchema* InferenceSchemas::GetSchema(const std::string& op, const int max_version,
                                                  const std::string& domain) const {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, max_version, domain);
  if (schema == nullptr || !has_window(*schema)) return schema;
  const auto key = std::make_tuple(op, domain, schema->SinceVersion());
  auto it = guarded_.find(key);
  if (it != guarded_.end()) return it->second.get();
  auto copy = std::make_unique<onnx::OpSchema>(*schema);
  const bool conv = domain.empty() && is_conv(op);
  const size_t weight = op == "QLinearConv" ? 3 : 1;
  copy->TypeAndShapeInferenceFunction([inner = schema->GetTypeAndShapeInferenceFunction(), conv,
                                       weight](onnx::InferenceContext& ctx) {
    check_window(ctx);
    if (conv) check_weight_rank(ctx, weight);
    if (inner) inner(ctx);
  });
  return guarded_.emplace(key, std::move(copy)).first->second.get();
}

}  // namespace jetplan::converter
