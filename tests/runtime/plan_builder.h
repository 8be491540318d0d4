// Builds small plans directly with the FlatBuffers API, so runtime tests do not depend on the
// converter and can produce deliberately broken plans.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <utility>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"
#include "jetplan/plan_generated.h"

namespace jetplan::testing {

struct TensorSpec {
  std::string name;
  std::vector<int64_t> shape;
  fb::Storage storage = fb::Storage::Arena;
  uint64_t offset = 0;
  int32_t binding = -1;
  fb::DType dtype = fb::DType::Float32;
  int64_t size_override = -1;  // >= 0: write this size_bytes instead of the true one
  int32_t view_of = -1;        // Tensor.view_of
  fb::Layout layout = fb::Layout::Any;
};

struct StepSpec {
  std::string name;
  fb::OpFamily op = fb::OpFamily::Copy;
  std::vector<uint32_t> inputs, outputs;
  // Writes the params union member; returns its type and offset.
  std::function<std::pair<fb::StepParams, flatbuffers::Offset<void>>(
      flatbuffers::FlatBufferBuilder&)>
      params;
  std::string kernel;           // CUDA plans: the variant
  fb::LaunchConfig launch{};    // CUDA plans
  uint64_t workspace_offset = 0, workspace_bytes = 0;
};

struct PlanSpec {
  uint32_t schema_version = JP_SCHEMA_VERSION;
  fb::Backend backend = fb::Backend::CPU;
  uint32_t sm_arch = 0;  // CUDA plans
  std::vector<TensorSpec> tensors;
  std::vector<std::pair<std::string, uint32_t>> inputs, outputs;
  std::vector<StepSpec> steps;
  uint64_t arena_bytes = 0;
  std::vector<uint8_t> weights;
};

// A step of family `op` reading `inputs` and writing `outputs` (plan tensor indices); the caller
// adds its params (and in CUDA plans its kernel and launch).
inline StepSpec step_spec(std::string name, fb::OpFamily op, std::vector<uint32_t> inputs,
                          std::vector<uint32_t> outputs) {
  StepSpec s;
  s.name = std::move(name);
  s.op = op;
  s.inputs = std::move(inputs);
  s.outputs = std::move(outputs);
  return s;
}

// An Activation step "relu": Relu of tensor `input` into tensor `output`.
inline StepSpec relu_step(uint32_t input, uint32_t output) {
  StepSpec relu = step_spec("relu", fb::OpFamily::Activation, {input}, {output});
  relu.params = [](flatbuffers::FlatBufferBuilder& b) {
    const fb::Activation act(fb::ActivationKind::Relu, 0.f, 0.f);
    return std::make_pair(fb::StepParams::ActivationParams,
                          fb::CreateActivationParams(b, &act).Union());
  };
  return relu;
}

inline uint64_t tensor_bytes(const TensorSpec& t) {
  uint64_t n = 1;
  for (int64_t d : t.shape) n *= static_cast<uint64_t>(d);
  uint64_t elem = 1;
  switch (t.dtype) {
    case fb::DType::Float32: case fb::DType::Int32: case fb::DType::UInt32: elem = 4; break;
    case fb::DType::Int64: case fb::DType::Float64: case fb::DType::UInt64: elem = 8; break;
    case fb::DType::Float16: case fb::DType::Int16: case fb::DType::UInt16:
    case fb::DType::BFloat16: elem = 2; break;
    case fb::DType::Int8: case fb::DType::UInt8: case fb::DType::Bool: elem = 1; break;
  }
  return n * elem;
}

inline std::vector<uint8_t> build_plan(const PlanSpec& spec) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  for (const TensorSpec& t : spec.tensors) {
    const uint64_t size = t.size_override >= 0 ? static_cast<uint64_t>(t.size_override)
                                               : tensor_bytes(t);
    tensors.push_back(fb::CreateTensorDirect(b, t.name.c_str(), &t.shape, t.dtype,
                                             t.layout, t.storage, t.offset, size,
                                             t.binding, /*quant=*/0, t.view_of));
  }
  auto bindings = [&](const std::vector<std::pair<std::string, uint32_t>>& list) {
    std::vector<flatbuffers::Offset<fb::BindingDesc>> out;
    for (const auto& [name, tensor] : list) {
      out.push_back(fb::CreateBindingDescDirect(b, name.c_str(), tensor));
    }
    return out;
  };
  auto inputs = bindings(spec.inputs);
  auto outputs = bindings(spec.outputs);
  std::vector<flatbuffers::Offset<fb::Step>> steps;
  for (const StepSpec& s : spec.steps) {
    fb::StepParams type = fb::StepParams::CopyParams;
    flatbuffers::Offset<void> params = fb::CreateCopyParams(b).Union();
    if (s.params) std::tie(type, params) = s.params(b);
    steps.push_back(fb::CreateStepDirect(b, s.name.c_str(), s.op, type, params, &s.inputs,
                                         &s.outputs, s.kernel.c_str(), &s.launch,
                                         s.workspace_offset, s.workspace_bytes));
  }
  auto target = fb::CreateTargetDirect(b, spec.backend == fb::Backend::CUDA ? "test-gpu" : "cpu", spec.backend, spec.sm_arch);
  auto metadata = fb::CreateMetadataDirect(b, "test", "", nullptr, "test");
  b.ForceVectorAlignment(spec.weights.size(), 1, 256);
  auto weights = b.CreateVector(spec.weights);
  auto input_vec = b.CreateVector(inputs);
  auto output_vec = b.CreateVector(outputs);
  auto tensor_vec = b.CreateVector(tensors);
  auto step_vec = b.CreateVector(steps);
  fb::PlanBuilder pb(b);
  pb.add_schema_version(spec.schema_version);
  pb.add_target(target);
  pb.add_inputs(input_vec);
  pb.add_outputs(output_vec);
  pb.add_tensors(tensor_vec);
  pb.add_steps(step_vec);
  pb.add_arena_bytes(spec.arena_bytes);
  pb.add_arena_alignment(256);
  pb.add_weights(weights);
  pb.add_metadata(metadata);
  fb::FinishPlanBuffer(b, pb.Finish());
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

}  // namespace jetplan::testing
