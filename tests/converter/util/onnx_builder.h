// Builds ONNX models for the converter tests through the protobuf API, so a test states its
// model next to its expectations and needs no Python.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace jetplan::converter::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int opset = 13) {
    model_.set_ir_version(8);
    model_.set_producer_name("jetplan-tests");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }

  // dims: a negative entry becomes the symbolic dim "N".
  ModelBuilder& input(const std::string& name, const std::vector<int64_t>& dims,
                      int elem_type = onnx::TensorProto::FLOAT) {
    auto* vi = model_.mutable_graph()->add_input();
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem_type);
    auto* shape = tt->mutable_shape();
    for (int64_t d : dims) {
      if (d < 0)
        shape->add_dim()->set_dim_param("N");
      else
        shape->add_dim()->set_dim_value(d);
    }
    return *this;
  }

  ModelBuilder& output(const std::string& name, int elem_type = onnx::TensorProto::FLOAT) {
    auto* vi = model_.mutable_graph()->add_output();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    return *this;
  }

  // An initializer with its name, type and dims but no data yet (owned by the model): the caller
  // stores its values (typed fields, raw_data or external data).
  onnx::TensorProto* empty_initializer(const std::string& name, int data_type,
                                       const std::vector<int64_t>& dims) {
    auto* t = model_.mutable_graph()->add_initializer();
    t->set_name(name);
    t->set_data_type(data_type);
    for (int64_t d : dims) t->add_dims(d);
    return t;
  }

  ModelBuilder& initializer(const std::string& name, const std::vector<int64_t>& dims,
                            const std::vector<float>& values) {
    auto* t = empty_initializer(name, onnx::TensorProto::FLOAT, dims);
    for (float v : values) t->add_float_data(v);
    return *this;
  }

  ModelBuilder& initializer_i64(const std::string& name, const std::vector<int64_t>& dims,
                                const std::vector<int64_t>& values) {
    auto* t = empty_initializer(name, onnx::TensorProto::INT64, dims);
    for (int64_t v : values) t->add_int64_data(v);
    return *this;
  }

  // A float initializer of uniform random values in [lo, hi), from a fixed seed.
  ModelBuilder& random(const std::string& name, const std::vector<int64_t>& dims, float lo = -1.f,
                       float hi = 1.f) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng_);
    return initializer(name, dims, v);
  }

  onnx::NodeProto& node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    auto* n = model_.mutable_graph()->add_node();
    n->set_op_type(op);
    if (!name.empty()) n->set_name(name);
    if (!domain.empty()) n->set_domain(domain);
    for (const auto& i : inputs) n->add_input(i);
    for (const auto& o : outputs) n->add_output(o);
    return *n;
  }

  onnx::ModelProto& model() { return model_; }
  std::string bytes() const { return model_.SerializeAsString(); }

 private:
  onnx::ModelProto model_;
  std::mt19937 rng_{1234};
};

inline onnx::AttributeProto* add_attr(onnx::NodeProto& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  return a;
}
inline void attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}
// A Constant node's int64 'value' tensor.
inline void attr_i64_tensor(onnx::NodeProto& n, const std::string& name,
                            const std::vector<int64_t>& dims, const std::vector<int64_t>& v) {
  auto* a = add_attr(n, name);
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t->add_dims(d);
  for (int64_t x : v) t->add_int64_data(x);
}

}  // namespace jetplan::converter::testing
