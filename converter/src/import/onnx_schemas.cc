#include "converter/src/import/onnx_schemas.h"

#include <onnx/defs/shape_inference.h>
#include <onnx/version_converter/convert.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <iostream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "converter/src/import/onnx_definitions.h"
#include "converter/src/import/onnx_proto.h"
#include "converter/src/ir/error.h"

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
  // libonnx 1.12's STFT inference reads onesided with a default of 0 where ONNX's is 1 (a
  // default STFT then gets N bins where it has N / 2 + 1): inference skips STFT nodes, and its
  // decomposition (ops/spectral.cc) computes the shape.
  if ((domain.empty() || domain == "ai.onnx") &&
      (newer_definition(op, model_opset_) != nullptr || op == "STFT"))
    return nullptr;
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

// ---- opset upgrade ----

namespace {

namespace vc = onnx::version_conversion;

std::string label(const onnx::NodeProto& node, int index) {
  const std::string name =
      node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
  return cat("'", name, "' (", node.op_type(), ")");
}

bool default_domain(const onnx::NodeProto& node) {
  return node.domain().empty() || node.domain() == "ai.onnx";
}

// An adapter's check: the version converter reports what it throws.
void require(bool ok, const char* what) {
  if (!ok) throw std::runtime_error(what);
}

// An adapter's failure, already naming the node.
// Feeds input 1 of `node` through a new Unsqueeze, inserted before it, that adds `axes` (its
// output has `sizes`): the legacy broadcasts below align that input with input 0 so.
void unsqueeze_second_input(onnx::Graph& graph, onnx::Node* node, std::vector<int64_t> axes,
                            const std::vector<onnx::Dimension>& sizes) {
  onnx::Node* unsqueeze = graph.create(onnx::kUnsqueeze);
  unsqueeze->addInput(node->inputs()[1]);
  unsqueeze->is_(onnx::kaxes, std::move(axes));
  unsqueeze->insertBefore(node);
  unsqueeze->output()->setSizes(sizes);
  unsqueeze->output()->setElemType(node->inputs()[1]->elemType());
  node->replaceInput(1, unsqueeze->output());
}

class AdapterError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Wraps an adapter so that its failures name the node it was adapting (libonnx's asserts name
// at most the op).
class NamingAdapter final : public vc::Adapter {
 public:
  explicit NamingAdapter(std::unique_ptr<vc::Adapter> inner)
      : Adapter(inner->name(), inner->initial_version(), inner->target_version()),
        inner_(std::move(inner)) {}

  onnx::Node* adapt(std::shared_ptr<onnx::Graph> graph, onnx::Node* node) const override {
    try {
      return inner_->adapt(std::move(graph), node);
    } catch (const AdapterError&) {
      throw;
    } catch (const std::exception& e) {
      throw AdapterError(cat("node '", node->has_name() ? node->name() : "(unnamed)", "' (", name(),
                             "), from opset ", initial_version().version(), " to ",
                             target_version().version(), ": ", e.what()));
    }
  }

 private:
  std::unique_ptr<vc::Adapter> inner_;
};

// 6 -> 7 for the elementwise ops: B's dims line up with A's from `axis` on (legacy broadcast);
// trailing 1s make numpy broadcasting do the same. libonnx 1.12's adapter appends A.rank - B.rank
// ones whatever the axis, which is right for axis 0 only.
class LegacyBroadcast final : public vc::Adapter {
 public:
  explicit LegacyBroadcast(const std::string& op)
      : Adapter(op, onnx::OpSetID(6), onnx::OpSetID(7)) {}

  // (A default-constructed Dimension leaves is_int unset.)
  static bool known(const onnx::Dimension& d) { return !d.is_unknown && d.is_int; }

  onnx::Node* adapt(std::shared_ptr<onnx::Graph> graph, onnx::Node* node) const override {
    const bool broadcast = node->hasAttribute(onnx::kbroadcast) && node->i(onnx::kbroadcast) != 0;
    if (broadcast && node->hasAttribute(onnx::kaxis)) {
      require(node->inputs().size() == 2, "broadcast with other than 2 inputs");
      const std::vector<onnx::Dimension> a = node->inputs()[0]->sizes();
      const std::vector<onnx::Dimension> b = node->inputs()[1]->sizes();
      const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
      int64_t axis = node->i(onnx::kaxis);
      if (axis < 0) axis += ra;
      require(axis >= 0 && axis + rb <= ra, "axis does not place B's dims inside A's");
      for (int64_t i = 0; i < rb; ++i)
        require(!known(a[axis + i]) || !known(b[i]) || a[axis + i].dim == b[i].dim || b[i].dim == 1,
                "B's dims do not match A's from axis on");
      const int64_t trailing = ra - axis - rb;
      if (trailing > 0) {
        std::vector<int64_t> axes;
        std::vector<onnx::Dimension> sizes = b;
        for (int64_t i = 0; i < trailing; ++i) {
          axes.push_back(rb + i);
          sizes.emplace_back(int64_t{1});
        }
        unsqueeze_second_input(*graph, node, std::move(axes), sizes);
      }
    }
    if (node->hasAttribute(onnx::kbroadcast)) node->removeAttribute(onnx::kbroadcast);
    if (node->hasAttribute(onnx::kaxis)) node->removeAttribute(onnx::kaxis);
    return node;
  }
};

// 6 -> 7 for PRelu: before opset 7 a slope of X's channel count is one value per channel
// (dim 1, as Caffe2 and PyTorch's old exporter meant it); opset 7 broadcasts the slope numpy
// style from the last dim, so such a slope becomes [C, 1, ...] for X of rank 3 or more.
class LegacyPRelu final : public vc::Adapter {
 public:
  LegacyPRelu() : Adapter("PRelu", onnx::OpSetID(6), onnx::OpSetID(7)) {}

  onnx::Node* adapt(std::shared_ptr<onnx::Graph> graph, onnx::Node* node) const override {
    require(node->inputs().size() == 2, "PRelu with other than 2 inputs");
    const std::vector<onnx::Dimension> x = node->inputs()[0]->sizes();
    const std::vector<onnx::Dimension> slope = node->inputs()[1]->sizes();
    const auto known = [](const onnx::Dimension& d) { return !d.is_unknown && d.is_int; };
    if (x.size() < 3 || slope.size() != 1 || !known(x[1]) || !known(slope[0]) ||
        slope[0].dim != x[1].dim || slope[0].dim == 1)
      return node;
    std::vector<int64_t> axes;
    std::vector<onnx::Dimension> sizes = slope;
    for (size_t i = 2; i < x.size(); ++i) {
      axes.push_back(static_cast<int64_t>(i - 1));
      sizes.emplace_back(int64_t{1});
    }
    unsqueeze_second_input(*graph, node, std::move(axes), sizes);
    return node;
  }
};

// 10 -> 11 for Pad: libonnx's adapter reads 'value', which is optional (0) before opset 11, and
// keeps it on pads of other modes, where opset 11 has no such attribute.
class PadToInputs final : public vc::Adapter {
 public:
  PadToInputs() : Adapter("Pad", onnx::OpSetID(10), onnx::OpSetID(11)) {}

  onnx::Node* adapt(std::shared_ptr<onnx::Graph> graph, onnx::Node* node) const override {
    const bool constant = !node->hasAttribute(onnx::kmode) || node->s(onnx::kmode) == "constant";
    if (constant && !node->hasAttribute(onnx::kvalue)) node->f_(onnx::kvalue, 0.0);
    if (!constant && node->hasAttribute(onnx::kvalue)) node->removeAttribute(onnx::kvalue);
    return inner_.adapt(std::move(graph), node);
  }

 private:
  vc::Pad_10_11 inner_;
};

// libonnx's version converter with the adapters its 1.12 release leaves out for the old opsets
// ("Missing in this group" in version_converter/convert.h), and with a pre-flight check that
// names every node it would stop at, where the converter stops at the first with an assert.
class Upgrader final : public vc::DefaultVersionConverter {
 public:
  Upgrader() {
    using onnx::OpSetID;
    // 6 -> 7: numpy broadcasting replaces the broadcast/axis attributes (libonnx lacks the
    // comparisons and logic ops and gets a nonzero axis wrong for the others).
    for (const char* op :
         {"Add", "And", "Div", "Equal", "Greater", "Less", "Mul", "Or", "Pow", "Sub", "Xor"})
      registerAdapter(std::make_unique<LegacyBroadcast>(op));
    registerAdapter(std::make_unique<PadToInputs>());
    registerAdapter(std::make_unique<LegacyPRelu>());
    // 6 -> 7: the recurrent ops drop output_sequence (Y became an optional output).
    for (const char* op : {"GRU", "LSTM", "RNN"})
      registerAdapter(op, 6, 7, [](std::shared_ptr<onnx::Graph>, onnx::Node* node) {
        const onnx::Symbol output_sequence("output_sequence");
        if (node->hasAttribute(output_sequence)) node->removeAttribute(output_sequence);
        return node;
      });
    // 2 -> 3: GRU gains linear_before_reset, whose default is the old behavior.
    registerAdapter(std::make_unique<vc::CompatibleAdapter>("GRU", OpSetID(2), OpSetID(3)));
    // 1 -> 2: Pad's paddings are renamed pads (same layout).
    registerAdapter("Pad", 1, 2, [](std::shared_ptr<onnx::Graph>, onnx::Node* node) {
      const onnx::Symbol paddings("paddings"), pads("pads");
      if (node->hasAttribute(paddings)) {
        require(node->kindOf(paddings) == onnx::AttributeKind::is,
                "Pad: paddings is not a list of ints");
        std::vector<int64_t> v = node->is(paddings);
        node->removeAttribute(paddings);
        node->is_(pads, std::move(v));
      }
      return node;
    });
    // 1 -> 2: Split loses its second input (the sizes are the 'split' attribute since).
    registerAdapter("Split", 1, 2, [](std::shared_ptr<onnx::Graph>, onnx::Node* node) {
      require(node->inputs().size() == 1,
              "Split of opset 1 with its sizes as an input has no opset-2 form here");
      return node;
    });
    // 1 -> 2: LpPool's p becomes an int.
    for (const char* op : {"GlobalLpPool", "LpPool"})
      registerAdapter(op, 1, 2, [](std::shared_ptr<onnx::Graph>, onnx::Node* node) {
        const onnx::Symbol p("p");
        if (node->hasAttribute(p) && node->kindOf(p) == onnx::AttributeKind::f) {
          const double v = node->f(p);
          require(v >= 1 && v <= 64 && v == static_cast<double>(static_cast<int64_t>(v)),
                  "LpPool: p is not a small whole number");
          node->removeAttribute(p);
          node->i_(p, static_cast<int64_t>(v));
        }
        return node;
      });
    // 5 -> 6: Cast's 'to' changes from a type name to a TensorProto.DataType number.
    registerAdapter("Cast", 5, 6, [](std::shared_ptr<onnx::Graph>, onnx::Node* node) {
      const onnx::Symbol to("to");
      if (node->hasAttribute(to) && node->kindOf(to) == onnx::AttributeKind::s) {
        onnx::TensorProto_DataType type = onnx::TensorProto::UNDEFINED;
        require(onnx::TensorProto_DataType_Parse(node->s(to), &type),
                "Cast: 'to' names no data type");
        node->removeAttribute(to);
        node->i_(to, static_cast<int64_t>(type));
      }
      return node;
    });
    // 12 -> 13: Hardmax changes its axis semantics like Softmax (libonnx 1.12 calls the two
    // versions compatible, which holds only for the last axis).
    registerAdapter(std::make_unique<vc::Softmax_12_13>("Hardmax"));

    for (auto& [op, from_map] : adapters)
      for (auto& [from, to_map] : from_map)
        for (auto& [to, adapter] : to_map)
          adapter = std::make_unique<NamingAdapter>(std::move(adapter));
  }

  // ONNX defines `op` anew at version `v` (a schema with that since_version).
  bool changes_at(const std::string& op, int v) const {
    auto o = all_schemas.find(op);
    if (o == all_schemas.end()) return false;
    auto d = o->second.find("");
    return d != o->second.end() && d->second.count(v) > 0;
  }

  bool has_adapter(const std::string& op, int from) const {
    auto o = adapters.find(op);
    if (o == adapters.end()) return false;
    auto f = o->second.find(onnx::OpSetID(from).toString());
    return f != o->second.end() && f->second.count(onnx::OpSetID(from + 1).toString()) > 0;
  }
};

// libonnx's converter warns on std::cerr (nodes of other domains, experimental ops); the CLI
// reports in one line, so those warnings are swallowed while it runs.
class QuietCerr {
 public:
  QuietCerr() : saved_(std::cerr.rdbuf(sink_.rdbuf())) {}
  ~QuietCerr() { std::cerr.rdbuf(saved_); }
  QuietCerr(const QuietCerr&) = delete;
  QuietCerr& operator=(const QuietCerr&) = delete;

 private:
  std::ostringstream sink_;
  std::streambuf* saved_;
};

// `text` holds `word` with no letter or digit on either side.
bool names_word(const std::string& text, const std::string& word) {
  auto boundary = [&](size_t p) {
    return p >= text.size() || !std::isalnum(static_cast<unsigned char>(text[p]));
  };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1))
    if ((at == 0 || boundary(at - 1)) && boundary(at + word.size())) return true;
  return false;
}

std::string list(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& item : items) s += (s.empty() ? "" : "; ") + item;
  return s;
}

// Inputs whose shapes an adapter between `from` and `to` reads, with the rank it needs (-1: any):
// libonnx's adapters index into those dims or decide by the rank, and read out of bounds or
// silently mis-convert when inference left them unknown.
std::vector<std::pair<int, int>> shape_inputs(const onnx::NodeProto& node, int from, int to) {
  const std::string& op = node.op_type();
  auto has_attr = [&](const char* name) {
    for (const auto& a : node.attribute())
      if (a.name() == name) return true;
    return false;
  };
  if (from < 7) {
    for (const char* b :
         {"Add", "And", "Div", "Equal", "Greater", "Less", "Mul", "Or", "Pow", "Sub", "Xor"})
      if (op == b && has_attr("broadcast")) return {{0, -1}, {1, -1}};
    if (op == "Gemm") return {{0, 2}, {1, 2}, {2, -1}};
    if (op == "Upsample") return {{0, 4}};
  }
  if (from < 13 && to >= 13 && (op == "Softmax" || op == "LogSoftmax" || op == "Hardmax"))
    return {{0, -1}};
  if (from < 11 && to >= 11 && (op == "Upsample" || op == "Resize")) return {{0, -1}};
  return {};
}

}  // namespace

int upgrade_opset(onnx::ModelProto* model, const int from) {
  const onnx::GraphProto& graph = model->graph();
  Upgrader upgrader;

  // Ops ONNX does not define at `from` (or at all) stop the converter with no useful message,
  // and libonnx 1.12's IR drops a node's domain, so that a node of another domain does too.
  std::vector<std::string> unknown, other_domain;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (!default_domain(node))
      other_domain.push_back(cat(label(node, i), " of domain '", node.domain(), "'"));
    else if (onnx::OpSchemaRegistry::Schema(node.op_type(), from) == nullptr)
      unknown.push_back(label(node, i));
  }
  if (!unknown.empty() || !other_domain.empty()) {
    auto count = [](size_t n) { return cat(n, n == 1 ? " node" : " nodes"); };
    std::string what;
    if (!unknown.empty())
      what = cat(count(unknown.size()), " of an op ONNX does not define at opset ", from, ": ",
                 list(unknown));
    if (!other_domain.empty())
      what += cat(what.empty() ? "" : "; ", count(other_domain.size()),
                  " of another domain, which libonnx 1.12's version converter cannot carry (and "
                  "jetplan has no ops of): ",
                  list(other_domain));
    fail("cannot upgrade the opset-", from, " model to opset ", kUpgradeOpset, ": ", what);
  }

  // The highest opset every node's changes have adapters for, and the nodes that stop below 7.
  int target = kUpgradeOpset;
  std::map<int, std::vector<std::string>> blocked;  // version step -> nodes
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (!default_domain(node)) continue;
    for (int v = from; v < kUpgradeOpset; ++v)
      if (upgrader.changes_at(node.op_type(), v + 1) && !upgrader.has_adapter(node.op_type(), v)) {
        blocked[v].push_back(label(node, i));
        break;
      }
  }
  if (!blocked.empty()) {
    const int step = blocked.begin()->first;
    if (step < 7) {
      std::vector<std::string> items;
      for (const auto& [v, nodes] : blocked)
        if (v < 7)
          for (const std::string& n : nodes)
            items.push_back(cat(n, ": no adapter from opset ", v, " to ", v + 1));
      fail("cannot upgrade the opset-", from, " model to opset 7 or later (libonnx 1.12's ",
           "version converter lacks the op change; re-export the model with a newer opset): ",
           list(items));
    }
    target = step;
  }

  // Shapes the adapters read.
  std::map<std::string, int> ranks;  // value -> rank, where known
  for (const auto* infos : {&graph.input(), &graph.output(), &graph.value_info()})
    for (const auto& info : *infos)
      if (info.type().tensor_type().has_shape())
        ranks[info.name()] = info.type().tensor_type().shape().dim_size();
  for (const auto& init : graph.initializer()) ranks[init.name()] = init.dims_size();
  std::vector<std::string> unshaped;
  for (int i = 0; i < graph.node_size(); ++i) {
    const auto& node = graph.node(i);
    if (!default_domain(node)) continue;
    for (const auto& [k, rank] : shape_inputs(node, from, target)) {
      if (k >= node.input_size() || node.input(k).empty()) continue;
      auto it = ranks.find(node.input(k));
      if (it == ranks.end()) {
        unshaped.push_back(cat(label(node, i), " input '", node.input(k), "': shape unknown"));
        break;
      }
      if (rank >= 0 && it->second != rank) {
        unshaped.push_back(cat(label(node, i), " input '", node.input(k), "': rank ", it->second,
                               " (", node.op_type(), " takes rank ", rank, ")"));
        break;
      }
    }
  }
  if (!unshaped.empty())
    fail("cannot upgrade the opset-", from, " model to opset ", target,
         ": libonnx's adapters read input shapes that are missing or wrong: ", list(unshaped));

  // The converter's importer refuses attributes without a type (written before IR version 2).
  for (auto& node : *model->mutable_graph()->mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      const auto type = attribute_type(a);
      if (type != a.type()) a.set_type(type);
    }

  onnx::ModelProto upgraded;
  try {
    QuietCerr quiet;
    upgraded = upgrader.convert_version(*model, onnx::OpSetID(from), onnx::OpSetID(target));
  } catch (const AdapterError& e) {
    fail("cannot upgrade the opset-", from, " model to opset ", target, ": ", e.what());
  } catch (const std::exception& e) {
    // The converter's own asserts name the op, not the node: name the nodes of that op.
    const std::string what = e.what();
    std::vector<std::string> nodes;
    for (int i = 0; i < graph.node_size(); ++i)
      if (names_word(what, graph.node(i).op_type())) nodes.push_back(label(graph.node(i), i));
    fail("cannot upgrade the opset-", from, " model to opset ", target,
         ": libonnx's version converter failed: ", what,
         nodes.empty() ? std::string() : " (nodes: " + list(nodes) + ")");
  }
  // Adapters add initializers that are not graph inputs, which IR version 3 models may not
  // have; IR version 7 (that of opset 13) allows them and reads the same otherwise.
  upgraded.set_ir_version(std::max<int64_t>(model->ir_version(), 7));
  *model = std::move(upgraded);
  return target;
}

}  // namespace jetplan::converter
