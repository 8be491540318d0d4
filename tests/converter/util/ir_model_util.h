// Converting and loading in process, reading steps, running plans, and models built as
// converter IR (IrModel) for ops of opsets that libonnx 1.12 cannot import.
#pragma once

#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <numeric>
#include <tuple>
#include <utility>

#include "converter/src/lower/lower.h"
#include "converter/src/passes/passes.h"
#include "converter/src/serialize/serialize.h"
#include "converter/src/ops/check.h"
#include "tests/converter/util/plan_runner.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {

using fb::OpFamily;

inline const fb::Plan* plan_of(const std::vector<uint8_t>& plan) {
  const fb::Plan* p = read_plan(plan);
  EXPECT_NE(p, nullptr);
  return p;
}

// The plan of convert_and_load (plan_runner.h); empty when the conversion failed.
inline std::vector<uint8_t> converted_plan(const ModelBuilder& m,
                                           const ConvertOptions& options = {}) {
  return convert_and_load(m, options).plan;
}

inline const fb::Step* first_step(const fb::Plan* plan, OpFamily op) {
  for (const auto* s : *plan->steps())
    if (s->op() == op) return s;
  ADD_FAILURE() << "no " << fb::EnumNameOpFamily(op) << " step";
  return nullptr;
}

// m converted and loaded, with its first step of `op` (first_step): see ConvertedStep.
inline ConvertedStep convert_to_first_step(const ModelBuilder& m, OpFamily op) {
  ConvertedStep c;
  c.result = convert_and_load(m);
  c.plan = plan_of(c.result.plan);
  if (c.plan != nullptr) c.step = first_step(c.plan, op);
  return c;
}

inline Shape vec(const flatbuffers::Vector<int64_t>* v) {
  return v ? Shape(v->begin(), v->end()) : Shape();
}

// Outputs of run_plan (plan_runner.h): bytes and run-time dims.
using Output = PlanOutput;

// The status and message of loading a plan that must not load.
inline std::pair<jp_status, std::string> load_error(const std::vector<uint8_t>& bytes) {
  jp_plan* plan = nullptr;
  const jp_status s = jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan);
  std::string message = s == JP_OK ? "" : jp_last_error();
  jp_plan_destroy(plan);
  return {s, message};
}

inline std::vector<float> ramp(size_t n, float scale = 0.25f, float offset = -1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 23);
  return v;
}

// ------------------------------------------------------------------ converter IR models
// For ops libonnx 1.12 cannot import (GroupNormalization, opset 18 Resize attributes), the model
// is built as the importer's output and run through the rest of the pipeline.

struct IrModel {
  Graph g;
  explicit IrModel(int opset) { g.opset = opset; }

  int value(const std::string& name, DataType dtype = DataType::kUndefined) {
    Value v;
    v.name = name;
    v.dtype = dtype;
    return g.add_value(std::move(v));
  }
  int input(const std::string& name, const Shape& shape) {
    const int id = value(name, DataType::kFloat32);
    g.values[id].shape = shape;
    g.values[id].shape_known = true;
    g.values[id].graph_input = static_cast<int>(g.inputs.size());
    g.inputs.push_back(id);
    return id;
  }
  int constant(const std::string& name, const Shape& shape, const std::vector<float>& v) {
    const int id = value(name, DataType::kFloat32);
    Value& c = g.values[id];
    c.shape = shape;
    c.shape_known = c.is_constant = true;
    c.data = write_doubles(DataType::kFloat32, std::vector<double>(v.begin(), v.end()));
    return id;
  }
  Node& node(const std::string& op, const std::vector<int>& inputs, const std::string& out) {
    Node n;
    n.name = op + "_node";
    n.op_type = op;
    n.inputs = inputs;
    n.outputs = {value(out)};
    g.values[n.outputs[0]].producer = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  void output(int id) {
    g.values[id].graph_output = true;
    g.outputs.push_back(id);
  }
};

inline void set_attr(Node& n, const std::string& name, int64_t v) {
  n.attrs[name].kind = Attribute::Kind::kInt;
  n.attrs[name].i = v;
}
inline void set_attr(Node& n, const std::string& name, const std::string& v) {
  n.attrs[name].kind = Attribute::Kind::kString;
  n.attrs[name].s = v;
}

// convert_onnx after the import.
inline std::vector<uint8_t> plan_from_ir(Graph g) {
  eliminate_dead_nodes(g);
  check_support(g);
  remove_identities(g);
  fold_batchnorm(g);
  fuse(g);
  legalize(g);
  PlanDraft draft = lower(g);
  assign_memory(&draft);
  return serialize_plan(draft, TargetDesc{}, PlanMetadata{});
}

inline std::string ir_error(Graph g) {
  try {
    plan_from_ir(std::move(g));
  } catch (const ConvertError& e) {
    return e.what();
  }
  ADD_FAILURE() << "conversion succeeded, an error was expected";
  return "";
}

inline void expect_near(const std::vector<float>& got, const std::vector<float>& want, float tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "element " << i;
}

}  // namespace jetplan::converter::testing
