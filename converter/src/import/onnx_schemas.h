// What the converter takes from libonnx's operator schemas.
//
// InferenceSchemas: the op schemas shape inference sees. libonnx 1.12's conv and pool inference
// functions trust values a damaged or hostile model can break: a stride of 0 divides by zero, a
// Conv whose weight rank differs from its input's reads out of bounds. This registry hands out
// every schema as libonnx has it, except that ops with window attributes (kernel_shape,
// strides, dilations, pads) check them, and conv ops their weight rank, before their inference
// function runs; and that an op whose definition at the model's opset is newer than libonnx's
// (onnx_definitions.h) has none, as an op libonnx does not know: inference skips its nodes and
// the op checks compute their outputs.
//
// upgrade_opset: models of opset 1-6 through libonnx's version converter, with the adapters
// libonnx 1.12 lacks and the checks its adapters skip.
#pragma once

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace jetplan::converter {

class InferenceSchemas final : public onnx::ISchemaRegistry {
 public:
  // model_opset: the model's default-domain opset (the one libonnx is asked for may be lower).
  explicit InferenceSchemas(int model_opset) : model_opset_(model_opset) {}

  // The schema is owned by this registry or by libonnx's and lives as long as this registry.
  const onnx::OpSchema* GetSchema(const std::string& op, int max_version,
                                  const std::string& domain) const override;

 private:
  int model_opset_;
  mutable std::map<std::tuple<std::string, std::string, int>, std::unique_ptr<onnx::OpSchema>>
      guarded_;
};

// The opset old models are upgraded to: the one exporters use most (torch's default for years),
// the first where Squeeze/Unsqueeze/Split/ReduceSum/Slice/Pad/Clip/Resize take their parameters
// as inputs and Softmax works on one axis; every change from 6 to 13 has a libonnx adapter.
constexpr int kUpgradeOpset = 13;

// Upgrades `model`, whose default-domain opset `from` is below 7, to kUpgradeOpset, or to the
// highest opset >= 7 below it that every node has adapters for. Preconditions: the model passed
// the structure checks, the libonnx checker and shape inference at its own opset (inference has
// filled value_info: several adapters read value shapes). Returns the opset reached; the model's
// ir_version becomes at least the one of that opset (adapters add initializers that are not
// graph inputs). ConvertError naming every node that blocks the upgrade: an op ONNX does not
// define at `from`, an op change libonnx has no adapter for, a shape an adapter needs that
// inference did not find, or the converter's own failure.
int upgrade_opset(onnx::ModelProto* model, int from);

}  // namespace jetplan::converter
