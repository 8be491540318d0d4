// Internal to the support checker: helpers shared by the per-op check functions, which live in
// support_ops.cc (elementwise, softmax, concat, shape-only ops) and support_nn.cc (conv, pool,
// gemm, matmul, batchnorm). Each check function returns "" or a reason; see support.h.
#pragma once

#include <initializer_list>
#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::support {

bool has_input(const Node& node, size_t i);
const Value& input(const Graph& g, const Node& node, size_t i);
// "" when each listed (present) input is float32, else the reason naming the first that is not.
std::string float_inputs(const Graph& g, const Node& node, std::initializer_list<size_t> which);
// "" when input i is of a dtype a plan holds, else the reason naming it.
std::string plan_dtype_input(const Graph& g, const Node& node, size_t i);
// "" when no output past the first is read by a node or is a graph output.
std::string extra_outputs_unused(const Graph& g, const Node& node, const char* what);
// Marks node.op resolved and sets output 0 to float32 `shape`; ConvertError if the model
// declared another shape for it.
void set_output(Graph& g, Node& node, const Shape& shape);
// The same for output `index` of any dtype (dims of 0 make an empty tensor; negative ones are
// refused).
void set_output_typed(Graph& g, Node& node, size_t index, DataType dtype, const Shape& shape);
// A constant scalar input (one element) as a float; false when absent or not constant.
bool constant_scalar(const Graph& g, const Node& node, size_t i, float* out);

std::string check_activation(Graph& g, Node& node);
std::string check_binary(Graph& g, Node& node);
std::string check_prelu(Graph& g, Node& node);
std::string check_softmax(Graph& g, Node& node);
std::string check_concat(Graph& g, Node& node);
std::string check_reshape(Graph& g, Node& node);   // Reshape Flatten Squeeze Unsqueeze
std::string check_identity(Graph& g, Node& node);  // Identity Dropout

std::string check_conv(Graph& g, Node& node);
std::string check_pool(Graph& g, Node& node);  // MaxPool AveragePool
std::string check_global_pool(Graph& g, Node& node);
std::string check_gemm(Graph& g, Node& node);
std::string check_matmul(Graph& g, Node& node);
std::string check_batchnorm(Graph& g, Node& node);

}  // namespace jetplan::converter::support
