#include "converter/src/import/onnx_import.h"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "converter/src/import/freeze.h"
#include "converter/src/import/onnx_definitions.h"
#include "converter/src/import/onnx_proto.h"
#include "converter/src/import/widen_floats.h"
#include "converter/src/import/onnx_schemas.h"
#include "converter/src/import/onnx_to_ir.h"
#include "converter/src/ir/error.h"

namespace jetplan::converter {
namespace {

// Opsets 7-17 are read as they are. Below 7 the elementwise ops broadcast only on request and
// several ops had other attributes: such models are upgraded to kUpgradeOpset first.
constexpr int kMinOpset = 7;
// Later opsets (up to kNewestOnnxOpset) are checked and inferred by libonnx 1.12 at
// kLibOnnxOpset, the newest it has schemas for. That reading is exact for every op whose
// definition at the model's opset differs from its opset-17 one in element types only; the
// nodes of the ops added or redefined since (onnx_definitions.h) are taken from libonnx as ops
// without a schema: check_newer_definitions checks them against their definition, and the op
// checks read them by it (Graph::opset stays the model's) or refuse them naming the opset.
// IR versions 9 to 14 (onnx 1.23) add element types (float8, int4, float4, float8e8m0, int2,
// float6), which are refused where they occur, function overloads, which no default-domain node
// uses, metadata and multi-device annotations, which do not change what a node computes on one
// device, and opaque types outside ONNX-ML, which no tensor has; libonnx 1.12's checker reads 8.
constexpr int64_t kMaxIrVersion = 14;

std::string dims_str(const onnx::TensorShapeProto& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto& d = shape.dim(i);
    s += i ? "," : "";
    if (d.has_dim_value())
      s += std::to_string(d.dim_value());
    else if (d.has_dim_param() && !d.dim_param().empty())
      s += d.dim_param();
    else
      s += "?";
  }
  return s + "]";
}

// ---- structure: every value defined once, every read defined, no cycle ----

struct Sorted {
  std::vector<int> order;  // original node indices in execution order
};

Sorted check_structure(const onnx::GraphProto& graph) {
  std::map<std::string, std::string> defined;  // value name -> what defines it, for messages
  std::set<std::string> initializers;
  for (const auto& init : graph.initializer()) {
    if (!initializers.insert(init.name()).second)
      fail("initializer '", init.name(), "' is defined twice");
    defined[init.name()] = "an initializer";
  }
  if (graph.sparse_initializer_size() > 0)
    fail("sparse initializer '", graph.sparse_initializer(0).values().name(),
         "' is not supported (store it dense)");
  std::set<std::string> inputs;
  for (const auto& in : graph.input()) {
    if (!inputs.insert(in.name()).second) fail("graph input '", in.name(), "' is listed twice");
    defined.emplace(in.name(), "a graph input");
  }
  const int n = graph.node_size();
  std::map<std::string, int> producer;
  for (int i = 0; i < n; ++i) {
    for (const std::string& out : graph.node(i).output()) {
      if (out.empty()) continue;
      auto it = defined.find(out);
      if (it != defined.end())
        fail("value '", out, "' is produced by node ", proto_label(graph.node(i), i),
             " but is already ", it->second);
      defined[out] = cat("the output of node ", proto_label(graph.node(i), i));
      producer[out] = i;
    }
  }
  // preds[i]: nodes whose outputs node i reads (with repeats, matched by the in-degree count).
  std::vector<std::vector<int>> preds(n), succs(n);
  for (int i = 0; i < n; ++i) {
    // A node with subgraphs also reads what they read from this graph (its outer references).
    std::vector<std::string> reads(graph.node(i).input().begin(), graph.node(i).input().end());
    for (const std::string& name : outer_references(graph.node(i))) reads.push_back(name);
    for (const std::string& in : reads) {
      if (in.empty()) continue;
      if (!defined.count(in))
        fail("missing initializer: node ", proto_label(graph.node(i), i), " reads '", in,
             "', which is not a graph input, an initializer or a node output");
      auto p = producer.find(in);
      if (p != producer.end()) {
        preds[i].push_back(p->second);
        succs[p->second].push_back(i);
      }
    }
  }
  for (const auto& out : graph.output())
    if (!defined.count(out.name()))
      fail("graph output '", out.name(), "' is not produced by any node or initializer");

  // Kahn's algorithm; the lowest original index goes first, so a sorted model keeps its order.
  std::vector<size_t> pending(n);
  std::set<int> ready;
  for (int i = 0; i < n; ++i) {
    pending[i] = preds[i].size();
    if (pending[i] == 0) ready.insert(i);
  }
  Sorted sorted;
  while (!ready.empty()) {
    const int i = *ready.begin();
    ready.erase(ready.begin());
    sorted.order.push_back(i);
    for (int s : succs[i])
      if (--pending[s] == 0) ready.insert(s);
  }
  if (static_cast<int>(sorted.order.size()) == n) return sorted;

  // Every node left waits on another node left, so walking producers must close a loop.
  std::vector<bool> done(n, false);
  for (int i : sorted.order) done[i] = true;
  int at = 0;
  while (done[at]) ++at;
  std::vector<int> walk;
  std::vector<int> seen_at(n, -1);
  while (seen_at[at] < 0) {
    seen_at[at] = static_cast<int>(walk.size());
    walk.push_back(at);
    for (int p : preds[at])
      if (!done[p]) {
        at = p;
        break;
      }
  }
  std::vector<int> cycle(walk.begin() + seen_at[at], walk.end());
  std::reverse(cycle.begin(), cycle.end());  // producer walk -> data-flow order
  std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());
  std::string path;
  for (int i : cycle) path += proto_label(graph.node(i), i) + " -> ";
  fail("cyclic graph: ", path, proto_label(graph.node(cycle[0]), cycle[0]));
}

// ---- shapes given on the command line ----

void pin_input_shapes(onnx::GraphProto* graph, const std::set<std::string>& initializers,
                      const std::map<std::string, Shape>& pins) {
  std::string input_names;
  std::set<std::string> runtime_inputs;
  for (const auto& in : graph->input()) {
    if (initializers.count(in.name())) continue;
    runtime_inputs.insert(in.name());
    input_names += (input_names.empty() ? "" : ", ") + in.name();
  }
  for (const auto& [name, dims] : pins)
    if (!runtime_inputs.count(name))
      fail("--shape names '", name, "', which is not a graph input (graph inputs: ",
           input_names.empty() ? "none" : input_names, ")");

  for (auto& in : *graph->mutable_input()) {
    if (initializers.count(in.name())) continue;
    if (!in.type().has_tensor_type()) continue;  // check_support reports non-tensor inputs
    auto* tensor_type = in.mutable_type()->mutable_tensor_type();
    auto pin = pins.find(in.name());
    if (pin != pins.end()) {
      const Shape& want = pin->second;
      if (tensor_type->has_shape()) {
        const auto& have = tensor_type->shape();
        if (have.dim_size() != static_cast<int>(want.size()))
          fail("--shape ", in.name(), ": input '", in.name(), "' has rank ", have.dim_size(), " ",
               dims_str(have), ", the --shape gives rank ", want.size());
        for (int d = 0; d < have.dim_size(); ++d)
          if (have.dim(d).has_dim_value() && have.dim(d).dim_value() != want[d])
            fail("--shape ", in.name(), ": dim ", d, " of input '", in.name(), "' is fixed at ",
                 have.dim(d).dim_value(), " ", dims_str(have));
      }
      if (checked_bytes(want, sizeof(float)) < 0)
        fail("--shape ", in.name(), ": ", shape_str(want), " is too large");
      auto* shape = tensor_type->mutable_shape();
      shape->clear_dim();
      for (int64_t d : want) shape->add_dim()->set_dim_value(d);
      continue;
    }
    if (!tensor_type->has_shape())
      fail("input '", in.name(), "' has no shape in the model; give one with --shape ", in.name(),
           ":DIMS");
    const auto& have = tensor_type->shape();
    std::string example;  // the fixed dims, 1 for the symbolic ones
    for (const auto& dim : have.dim())
      example += (example.empty() ? "" : "x") +
                 (dim.has_dim_value() ? std::to_string(dim.dim_value()) : std::string("1"));
    for (int d = 0; d < have.dim_size(); ++d) {
      if (!have.dim(d).has_dim_value()) {
        const std::string param = have.dim(d).dim_param();
        fail("input '", in.name(), "' has a symbolic dim ",
             param.empty() ? std::string("?") : "'" + param + "'", " at index ", d, " ",
             dims_str(have), "; pin it with --shape, e.g. --shape ", in.name(), ":", example);
      }
      if (have.dim(d).dim_value() < 0)
        fail("input '", in.name(), "' has dim ", have.dim(d).dim_value(), " at index ", d, " ",
             dims_str(have), "; jetplan needs every dim >= 0");
    }
    Shape dims;
    for (const auto& dim : have.dim()) dims.push_back(dim.dim_value());
    if (checked_bytes(dims, sizeof(float)) < 0)
      fail("input '", in.name(), "' of shape ", dims_str(have), " is too large");
  }
}

// ---- libonnx checker and shape inference ----

bool lacks_shape(const onnx::ValueInfoProto& info) {
  return info.type().has_tensor_type() && !info.type().tensor_type().has_shape();
}

// The checker stops at the first node whose op it does not know, which would hide every other
// problem; so it checks a copy of the model where such nodes are cut out and their outputs
// become graph inputs. libonnx 1.12's checker also insists that every graph input and output
// declares a shape, which the ONNX spec leaves optional (and later checkers do not ask): in the
// copy, a missing shape becomes an empty one. The checker checks structure, not shapes, so
// neither change hides a problem of the model; shape inference runs on the model itself.
// Subgraphs (If branches, Loop and Scan bodies) are checked with the node that holds them; their
// nodes of unknown ops are cut out of the copy too, and their outputs become graph inputs of the
// copy, which the subgraphs then read from the enclosing scope.
using UnknownOp = std::function<bool(const onnx::NodeProto&)>;

bool subgraphs_have_unknown(const onnx::NodeProto& node, const UnknownOp& unknown) {
  for (const auto& a : node.attribute()) {
    std::vector<const onnx::GraphProto*> graphs;
    if (a.has_g()) graphs.push_back(&a.g());
    for (const auto& g : a.graphs()) graphs.push_back(&g);
    for (const onnx::GraphProto* g : graphs)
      for (const auto& n : g->node())
        if (unknown(n) || subgraphs_have_unknown(n, unknown)) return true;
  }
  return false;
}

void strip_unknown(onnx::NodeProto* node, const UnknownOp& unknown, std::set<std::string>* cut) {
  for (auto& a : *node->mutable_attribute()) {
    std::vector<onnx::GraphProto*> graphs;
    if (a.has_g()) graphs.push_back(a.mutable_g());
    for (auto& g : *a.mutable_graphs()) graphs.push_back(&g);
    for (onnx::GraphProto* g : graphs) {
      google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
      for (auto& n : *g->mutable_node()) {
        if (unknown(n)) {
          for (const std::string& out : n.output())
            if (!out.empty()) cut->insert(out);
          continue;
        }
        strip_unknown(&n, unknown, cut);
        *kept.Add() = n;
      }
      g->mutable_node()->Swap(&kept);
      google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
      for (const auto& info : g->value_info())
        if (!cut->count(info.name())) *infos.Add() = info;
      g->mutable_value_info()->Swap(&infos);
    }
  }
}

void run_checker(const onnx::ModelProto& model, const std::vector<bool>& unknown_op,
                 const UnknownOp& unknown) {
  const auto& graph = model.graph();
  bool adapt = std::find(unknown_op.begin(), unknown_op.end(), true) != unknown_op.end();
  for (const auto& node : graph.node()) adapt = adapt || subgraphs_have_unknown(node, unknown);
  for (const auto* list : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const auto& info : *list) adapt = adapt || lacks_shape(info);
  try {
    if (!adapt) {
      onnx::checker::check_model(model);
      return;
    }
    onnx::ModelProto copy = model;
    onnx::GraphProto* g = copy.mutable_graph();
    std::map<std::string, const onnx::ValueInfoProto*> declared;
    for (const auto& info : graph.value_info()) declared[info.name()] = &info;
    std::set<std::string> cut_outputs;
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < g->node_size(); ++i) {
      if (!unknown_op[i]) {
        strip_unknown(g->mutable_node(i), unknown, &cut_outputs);
        *kept.Add() = g->node(i);
        continue;
      }
      for (const std::string& out : g->node(i).output())
        if (!out.empty()) cut_outputs.insert(out);
    }
    g->mutable_node()->Swap(&kept);
    google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
    for (const auto& info : g->value_info())
      if (!cut_outputs.count(info.name())) *infos.Add() = info;
    g->mutable_value_info()->Swap(&infos);
    for (const std::string& name : cut_outputs) {
      auto* in = g->add_input();
      auto it = declared.find(name);
      if (it != declared.end() && it->second->type().has_tensor_type()) {
        *in = *it->second;
      } else {
        in->set_name(name);
        in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
      }
    }
    for (auto* list : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()})
      for (auto& info : *list)
        if (lacks_shape(info)) info.mutable_type()->mutable_tensor_type()->mutable_shape();
    onnx::checker::check_model(copy);
  } catch (const std::exception& e) {
    fail("invalid ONNX model: ", e.what());
  }
}

// libonnx 1.12's checker refuses a tensor of an element type it does not know (float8, int4 and
// the others of IR versions 9 to 14) as an "unrecognized data_type" number; such tensors are
// named first, with their type.
void refuse_newer_element_types(const onnx::GraphProto& graph) {
  std::vector<std::string> bad;
  auto check = [&](const onnx::TensorProto& t, const std::string& what) {
    if (t.data_type() > onnx::TensorProto::BFLOAT16)
      bad.push_back(cat(what, " is ", dtype_name(static_cast<DataType>(t.data_type()))));
  };
  for (const auto& init : graph.initializer()) check(init, cat("initializer '", init.name(), "'"));
  for (int i = 0; i < graph.node_size(); ++i)
    for (const auto& a : graph.node(i).attribute())
      if (a.has_t())
        check(a.t(), cat("attribute '", a.name(), "' of ", proto_label(graph.node(i), i)));
  if (bad.empty()) return;
  std::string list;
  for (const std::string& b : bad) list += (list.empty() ? "" : "; ") + b;
  fail("unsupported element types (plans hold ", plan_dtype_list(), "): ", list);
}

// strict: an inference error fails the import. Not strict: inference fills what it can (before
// an opset upgrade, whose adapters read shapes; strict inference follows on the upgraded model).
// model_opset: the model's own default-domain opset (see InferenceSchemas).
void run_shape_inference(onnx::ModelProto* model, bool strict, int model_opset) {
  try {
    // No data propagation: the converter folds shape computations itself, and libonnx 1.12's
    // propagators dereference the type of an input that has none (a Shape of opset 15 fed by
    // an op it does not know crashes).
    onnx::ShapeInferenceOptions options(/*check_type=*/strict, /*error_mode=*/strict ? 1 : 0,
                                        /*enable_data_propagation=*/false);
    const InferenceSchemas schemas(model_opset);
    onnx::shape_inference::InferShapes(*model, &schemas, options);
  } catch (const std::exception& e) {
    fail("shape inference failed: ", e.what());
  }
}

// Per node: its op has no libonnx schema at the model's opset of its domain, or its definition
// at the model's default-domain opset `model_opset` is newer than libonnx's. A node of a domain
// the model does not import gets an import (version 1): strict shape inference refuses such a
// node, though it skips one it has no schema for, and so it is reported as what it is, an op
// jetplan lacks.
std::vector<bool> unknown_ops(onnx::ModelProto* model, std::map<std::string, int>* opsets,
                              int model_opset) {
  const onnx::GraphProto& graph = model->graph();
  std::vector<bool> unknown(graph.node_size(), false);
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    const std::string domain = normalized_domain(node.domain());
    auto it = opsets->find(domain);
    if (it == opsets->end()) {
      auto* o = model->add_opset_import();
      o->set_domain(domain);
      o->set_version(1);
      it = opsets->emplace(domain, 1).first;
    }
    unknown[i] = onnx::OpSchemaRegistry::Schema(node.op_type(), it->second, domain) == nullptr ||
                 (domain.empty() && newer_definition(node.op_type(), model_opset) != nullptr);
  }
  return unknown;
}

// unknown_ops' test for one node of a subgraph (whose domains the model imports, or it is
// unknown).
UnknownOp unknown_in(const std::map<std::string, int>& opsets, int model_opset) {
  return [opsets, model_opset](const onnx::NodeProto& node) {
    const std::string domain = normalized_domain(node.domain());
    auto it = opsets.find(domain);
    return it == opsets.end() ||
           onnx::OpSchemaRegistry::Schema(node.op_type(), it->second, domain) == nullptr ||
           (domain.empty() && newer_definition(node.op_type(), model_opset) != nullptr);
  };
}

// Sorts the graph's nodes into the order check_structure found; returns that order.
std::vector<int> sort_nodes(onnx::GraphProto* graph) {
  const Sorted sorted = check_structure(*graph);
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int i : sorted.order) nodes.Add()->Swap(graph->mutable_node(i));
  graph->mutable_node()->Swap(&nodes);
  return sorted.order;
}

}  // namespace

Graph import_onnx(const std::string& bytes, const ImportOptions& options) {
  if (bytes.empty()) fail("the file is empty, not an ONNX model");
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes))
    fail("not an ONNX model: the bytes do not parse as an ONNX ModelProto (not ONNX, or ",
         "truncated or corrupt)");
  // Arbitrary bytes sometimes parse as a protobuf message of unknown fields; a model has these.
  if (!model.has_ir_version() || !model.has_graph() || model.opset_import_size() == 0)
    fail("not an ONNX model: no ",
         !model.has_ir_version() ? "ir_version"
         : !model.has_graph()    ? "graph"
                                 : "opset_import",
         " in the ModelProto");
  if (model.ir_version() > kMaxIrVersion)
    fail("IR version ", model.ir_version(), " is newer than jetplan-convert reads (up to ",
         kMaxIrVersion, "); save the model with an older onnx package");
  model.set_ir_version(std::min<int64_t>(model.ir_version(), onnx::Version::IR_VERSION));

  std::map<std::string, int> opsets;
  for (const auto& o : model.opset_import()) {
    const std::string domain = normalized_domain(o.domain());
    if (o.version() < 1 || o.version() > INT_MAX)
      fail("the model imports opset ", o.version(), " of domain '",
           domain.empty() ? "ai.onnx" : domain, "', which is not an opset version");
    if (!opsets.emplace(domain, static_cast<int>(o.version())).second)
      fail("the model imports domain '", domain.empty() ? "ai.onnx" : domain, "' twice (opset ",
           opsets[domain], " and ", o.version(), ")");
  }
  auto default_opset = opsets.find("");
  if (default_opset == opsets.end()) fail("the model imports no opset of the default ONNX domain");
  const int model_opset = default_opset->second;
  if (model_opset > kNewestOnnxOpset)
    fail("opset ", model_opset, " is newer than jetplan-convert reads (opsets 1 to ",
         kNewestOnnxOpset, ", that of onnx 1.23); export with opset ", kNewestOnnxOpset,
         " or lower (torch.onnx.export(..., opset_version=", kNewestOnnxOpset,
         ")) or convert with onnx.version_converter.convert_version(model, ", kNewestOnnxOpset,
         ")");
  if (model_opset > kLibOnnxOpset) {
    for (auto& o : *model.mutable_opset_import())
      if (normalized_domain(o.domain()).empty()) o.set_version(kLibOnnxOpset);
    opsets[""] = kLibOnnxOpset;
  }

  load_external_data(model.mutable_graph(), options.model_dir);
  refuse_newer_element_types(model.graph());

  std::vector<int> order = sort_nodes(model.mutable_graph());
  std::set<std::string> initializers;
  for (const auto& init : model.graph().initializer()) initializers.insert(init.name());
  for (const auto& [name, value] : options.freeze)
    if (options.input_shapes.count(name))
      throw OptionError(cat("input '", name, "' is given both --shape and --freeze (a frozen ",
                            "input takes the shape of its value)"));
  freeze_inputs(model.mutable_graph(), initializers, options.freeze);
  for (const auto& [name, value] : options.freeze) initializers.insert(name);
  pin_input_shapes(model.mutable_graph(), initializers, options.input_shapes);
  const NarrowValues narrow = widen_floats(&model);

  int opset = model_opset;
  if (opset < kMinOpset) {
    // The model is checked as it is, then upgraded: errors name its own nodes, and the adapters
    // find the value shapes they read.
    const std::vector<bool> old_unknown = unknown_ops(&model, &opsets, model_opset);
    run_checker(model, old_unknown, unknown_in(opsets, model_opset));
    run_shape_inference(&model, /*strict=*/false, model_opset);
    opset = upgrade_opset(&model, model_opset);
    opsets[""] = opset;
    // Adapters insert nodes: unnamed nodes are named by their place in the upgraded model.
    order = sort_nodes(model.mutable_graph());
  }

  const std::vector<bool> unknown = unknown_ops(&model, &opsets, model_opset);
  run_checker(model, unknown, unknown_in(opsets, model_opset));
  run_shape_inference(&model, /*strict=*/true, model_opset);
  Graph g = build_graph(model, order, std::max(opset, model_opset));
  narrow_values(g, narrow);
  check_newer_definitions(g);
  return g;
}

std::vector<OnnxOpInfo> onnx_default_domain_ops() {
  std::map<std::string, OnnxOpInfo> ops;
  for (const onnx::OpSchema& schema : onnx::OpSchemaRegistry::get_all_schemas()) {
    if (!schema.domain().empty() || schema.SinceVersion() > kLibOnnxOpset) continue;
    ops[schema.Name()] = {schema.Name(), schema.SinceVersion(), schema.Deprecated()};
  }
  for (const auto& [op, version] : newer_ops())
    ops[op] = {op, version, ops.count(op) ? ops[op].deprecated : false};
  std::vector<OnnxOpInfo> out;
  for (auto& [op, info] : ops) out.push_back(std::move(info));
  return out;
}

}  // namespace jetplan::converter
