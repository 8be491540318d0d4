// OnnxNodes (see decompose.h).
#include "converter/src/ops/decompose.h"

#include <cstring>
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"

namespace jetplan::converter::ops {

OnnxNodes::OnnxNodes(Graph& g, const Node& node, std::vector<Node>* out)
    : g_(g), prefix_(node.name + "/"), out_(*out), names_(g) {}

std::string OnnxNodes::unique(const std::string& what) { return names_.unique(prefix_ + what); }

int OnnxNodes::add(const std::string& op_type, const std::string& what, std::vector<int> inputs,
                   std::map<std::string, Attribute> attrs, int to) {
  Node n;
  n.name = unique(what);
  n.op_type = op_type;
  n.inputs = std::move(inputs);
  if (to < 0) {
    Value v;
    v.name = unique(what + "_output");
    to = g_.add_value(std::move(v));
  }
  n.outputs = {to};
  n.attrs = std::move(attrs);
  out_.push_back(std::move(n));
  return to;
}

int OnnxNodes::constant(const std::string& what, DataType dtype, const Shape& shape,
                        std::vector<uint8_t> bytes) {
  return new_constant(g_, unique(what), dtype, shape, std::move(bytes));
}

int OnnxNodes::ints(const std::string& what, const std::vector<int64_t>& v) {
  return constant(what, DataType::kInt64, {static_cast<int64_t>(v.size())},
                  write_ints(DataType::kInt64, v));
}

int OnnxNodes::floats(const std::string& what, const Shape& shape, const std::vector<float>& v) {
  std::vector<uint8_t> bytes(v.size() * sizeof(float));
  if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
  return constant(what, DataType::kFloat32, shape, std::move(bytes));
}

int OnnxNodes::scalar(const std::string& what, float v) { return floats(what, {}, {v}); }

Attribute OnnxNodes::int_attr(int64_t v) {
  Attribute a;
  a.kind = Attribute::Kind::kInt;
  a.i = v;
  return a;
}

Attribute OnnxNodes::ints_attr(std::vector<int64_t> v) {
  Attribute a;
  a.kind = Attribute::Kind::kInts;
  a.ints = std::move(v);
  return a;
}

}  // namespace jetplan::converter::ops
