// The tensor group's expansion at legalize (expand_tensor): typed arithmetic promoted through a
// compute dtype, Split, DepthToSpace/SpaceToDepth, variadic Sum/Mean/Max/Min and Einsum
// (diagonals first, then a Transpose, batched products or a Mul + Reduce Sum) become the steps
// that compute them.
#include <string>
#include <utility>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/support_group_tensor.h"
#include "converter/src/support_groups.h"

namespace jetplan::converter {
namespace {

using tensor::ArithWay;
using tensor::arith_way;
using tensor::binary_op;
using tensor::elementwise_arith_op;
using tensor::EinsumPlan;
using tensor::plan_einsum;

class TensorExpander {
 public:
  TensorExpander(Graph& g, std::vector<Node>* out) : g_(g), out_(*out) {}

  void expand(Node node) {
    const TensorExpand kind = node.op.tensor.expand;
    node.op.tensor.expand = TensorExpand::kNone;
    switch (kind) {
      case TensorExpand::kNone: out_.push_back(std::move(node)); return;
      case TensorExpand::kPromote: promote(std::move(node)); return;
      case TensorExpand::kSplit: split(std::move(node)); return;
      case TensorExpand::kSpaceDepth: space_depth(std::move(node)); return;
      case TensorExpand::kVariadic: variadic(std::move(node)); return;
      case TensorExpand::kEinsum: einsum(std::move(node)); return;
    }
  }

 private:
  const Value& value(int id) const { return g_.values[id]; }

  Node step(const std::string& name, fb::OpFamily family, std::vector<int> inputs, int output) {
    Node n;
    n.name = name;
    n.op_type = fb::EnumNameOpFamily(family);
    n.inputs = std::move(inputs);
    n.outputs = {output};
    n.op.resolved = true;
    n.op.family = family;
    return n;
  }

  // Value `v` as `to`: a constant is converted now, a run-time tensor by a Cast step. New
  // values are named after their step, which keeps tensor names unique.
  int cast(int v, DataType to, const std::string& step_name) {
    if (value(v).dtype == to) return v;
    if (value(v).is_constant) {
      const TensorData converted =
          fold::cast_data(TensorData{value(v).dtype, value(v).shape, value(v).data}, to);
      return new_constant(g_, step_name, to, value(v).shape, converted.bytes);
    }
    const int id = new_value(g_, step_name, to, value(v).shape);
    out_.push_back(step(step_name, fb::OpFamily::Cast, {v}, id));
    return id;
  }

  // Value `v` with another shape of the same size.
  int view(int v, const Shape& shape, const std::string& step_name) {
    if (value(v).shape == shape) return v;
    if (value(v).is_constant)
      return new_constant(g_, step_name, value(v).dtype, shape, value(v).data);
    const int id = new_value(g_, step_name, value(v).dtype, shape);
    out_.push_back(copy_node(step_name, v, id));
    return id;
  }

  // `v` transposed by perm into value `to` (-1: a new value); constants are transposed now.
  int transpose(int v, const std::vector<int32_t>& perm, const std::string& step_name,
                int to = -1) {
    const Shape& xs = value(v).shape;
    Shape shape(perm.size());
    for (size_t d = 0; d < perm.size(); ++d) shape[d] = xs[perm[d]];
    if (value(v).is_constant && to < 0) {
      const TensorData t = fold::transpose_data(
          TensorData{value(v).dtype, xs, value(v).data}, xs, perm);
      return new_constant(g_, step_name, value(v).dtype, shape, t.bytes);
    }
    if (to < 0) to = new_value(g_, step_name, value(v).dtype, shape);
    Node n = step(step_name, fb::OpFamily::Transpose, {v}, to);
    n.op.tensor.perm = perm;
    out_.push_back(std::move(n));
    return to;
  }

  // Runs the node in its compute dtype: its inputs cast there, its output cast back.
  void promote(Node node) {
    const auto compute = static_cast<DataType>(node.op.tensor.compute_dtype);
    for (size_t i = 0; i < node.inputs.size(); ++i)
      node.inputs[i] = cast(node.inputs[i], compute, node.name + ":in" + std::to_string(i));
    const int y = node.outputs[0];
    // Predicates and comparisons give bool directly; Pow of a float64 base gives float64.
    if (value(y).dtype == DataType::kBool || value(y).dtype == compute) {
      out_.push_back(std::move(node));
      return;
    }
    const std::string name = node.name + ":out";
    const int tmp = new_value(g_, node.name + ":" + dtype_name(compute), compute, value(y).shape);
    node.outputs[0] = tmp;
    out_.push_back(std::move(node));
    out_.push_back(step(name, fb::OpFamily::Cast, {tmp}, y));
  }

  void split(Node node) {
    const int x = node.inputs[0];
    const size_t rank = value(x).shape.size();
    int64_t offset = 0;
    for (size_t i = 0; i < node.outputs.size(); ++i) {
      const int64_t size = node.op.tensor.split[i];
      if (node.outputs[i] >= 0) {
        Node n = step(node.name + ":" + std::to_string(i), fb::OpFamily::Slice, {x},
                      node.outputs[i]);
        n.op.tensor.starts.assign(rank, 0);
        n.op.tensor.steps.assign(rank, 1);
        n.op.tensor.starts[node.op.tensor.axis] = offset;
        out_.push_back(std::move(n));
      }
      offset += size;
    }
  }

  void space_depth(Node node) {
    const int x = view(node.inputs[0], node.op.tensor.view, node.name + ":6d");
    const int t = transpose(x, node.op.tensor.perm, node.name);
    view_into(t, node.outputs[0], node.name + ":4d");
  }

  // Writes `v` into the existing value `y` (same size, maybe another shape) with a Copy.
  void view_into(int v, int y, const std::string& step_name) {
    out_.push_back(copy_node(step_name, v, y));
  }

  // One two-input arithmetic step a op b -> out (-1: a new value), in the dtype of a and b.
  int arith(const std::string& op, int a, int b, int out, const std::string& name) {
    const DataType dtype = value(a).dtype;
    Shape shape;
    broadcast_shapes(value(a).shape, value(b).shape, &shape);
    if (out < 0) out = new_value(g_, name, dtype, shape);
    DataType compute;
    const ArithWay way = arith_way(op, dtype, &compute);
    if (way == ArithWay::kBinary) {
      Node n = step(name, fb::OpFamily::Binary, {a, b}, out);
      n.op.binary = binary_op(op);
      out_.push_back(std::move(n));
    } else if (way == ArithWay::kElementwise) {
      Node n = step(name, fb::OpFamily::Elementwise, {a, b}, out);
      n.op.tensor.elementwise = elementwise_arith_op(op);
      out_.push_back(std::move(n));
    } else {
      fail("internal error: ", op, " on ", dtype_name(dtype), " has no arithmetic step");
    }
    return out;
  }

  // Sum, Mean, Max, Min over N inputs: a left fold,
  // in the compute dtype; Mean divides the sum by N.
  void variadic(Node node) {
    const std::string& op = node.op_type;
    const int y = node.outputs[0];
    const DataType dtype = value(y).dtype;
    const auto compute = static_cast<DataType>(node.op.tensor.compute_dtype);
    std::vector<int> xs;
    for (size_t i = 0; i < node.inputs.size(); ++i)
      xs.push_back(cast(node.inputs[i], compute, node.name + ":in" + std::to_string(i)));
    const bool mean = op == "Mean";
    const bool direct = compute == dtype && !mean;  // the last step writes y itself
    int acc = xs[0];
    for (size_t i = 1; i < xs.size(); ++i) {
      const bool last = i + 1 == xs.size();
      const std::string name = node.name + (last && direct ? "" : ":" + std::to_string(i));
      acc = arith(op == "Sum" || mean ? "Add" : op, acc, xs[i], last && direct ? y : -1, name);
    }
    if (mean) {
      const int n = new_constant(g_, node.name + ":count", compute, {},
                                 write_doubles(compute, {static_cast<double>(xs.size())}));
      acc = arith("Div", acc, n, compute == dtype ? y : -1,
                  compute == dtype ? node.name : node.name + ":mean");
    }
    if (compute != dtype) out_.push_back(step(node.name + ":out", fb::OpFamily::Cast, {acc}, y));
  }

  // A two-operand contraction as batched matrix products: A to [batch, M, K] (or [batch, K, M],
  // transposed by the Gemm), B to [batch, K, N] (or [batch, N, K]), both transposed first only
  // when their indices come in neither order; the product [batch, M, N] is then viewed (and
  // transposed, if needed) as the output.
  // Einsum with sums or outside float32: every operand transposed to the order
  // output indices + summed indices (those it has) and viewed with 1s for the others, their
  // broadcast product (one operand: itself), and a Reduce Sum over the summed indices, viewed
  // as the output.
  void einsum_reduce(Node node) {
    const TensorOpDesc& t = node.op.tensor;
    const std::string out(t.einsum_out.begin(), t.einsum_out.end());
    std::vector<std::string> terms = {std::string(t.einsum_a.begin(), t.einsum_a.end())};
    if (!t.einsum_b.empty()) terms.emplace_back(t.einsum_b.begin(), t.einsum_b.end());
    std::string order = out;
    int64_t dim[128] = {};
    for (size_t i = 0; i < terms.size(); ++i)
      for (size_t d = 0; d < terms[i].size(); ++d) {
        const char c = terms[i][d];
        dim[static_cast<int>(c)] = value(node.inputs[i]).shape[d];
        if (order.find(c) == std::string::npos) order += c;
      }
    Shape full;
    for (char c : order) full.push_back(dim[static_cast<int>(c)]);
    std::vector<int> xs;
    for (size_t i = 0; i < terms.size(); ++i) {
      const std::string tag = node.name + ":" + std::string(1, static_cast<char>('A' + i));
      std::string sorted;  // the operand's indices in `order`
      for (char c : order)
        if (terms[i].find(c) != std::string::npos) sorted += c;
      std::vector<int32_t> perm;
      for (char c : sorted) perm.push_back(static_cast<int32_t>(terms[i].find(c)));
      int v = node.inputs[i];
      if (sorted != terms[i]) v = transpose(v, perm, tag + "t");
      Shape shape;
      for (char c : order)
        shape.push_back(terms[i].find(c) != std::string::npos ? dim[static_cast<int>(c)] : 1);
      xs.push_back(view(v, shape, tag + "v"));
    }
    const int y = node.outputs[0];
    int p = xs[0];
    if (xs.size() == 2) p = arith("Mul", xs[0], xs[1], -1, node.name + ":mul");
    if (order.size() == out.size()) {  // nothing summed
      view_into(p, y, node.name + ":Y");
      return;
    }
    Shape kept = full;  // the Reduce step's output: summed dims of extent 1
    Node r = step(node.name, fb::OpFamily::Reduce, {p}, -1);
    r.op_type = "ReduceSum";
    r.op.nn.reduce_op = fb::ReduceOp::Sum;
    for (size_t d = out.size(); d < order.size(); ++d) {
      r.op.nn.axes.push_back(static_cast<int32_t>(d));
      kept[d] = 1;
    }
    const int sum = new_value(g_, node.name + ":sum", value(y).dtype, kept);
    r.outputs[0] = sum;
    out_.push_back(std::move(r));
    view_into(sum, y, node.name + ":Y");
  }

  // Operand `v` with term `full`, in which an index repeats, as its diagonal (the term
  // einsum_diagonal_term gives): the dims of each repeated index transposed next to each other
  // and viewed as one of extent n^count, read by a Slice with the stride 1 + n + .. +
  // n^(count-1), which walks from (0, .., 0) to (n-1, .., n-1) along the diagonal.
  int diagonal(int v, const std::string& full, const std::string& tag) {
    const std::string reduced = tensor::einsum_diagonal_term(full);
    const Shape xs = value(v).shape;
    std::vector<int32_t> perm;
    Shape grouped, out;
    std::vector<int64_t> strides;
    for (char c : reduced) {
      int64_t n = 1, span = 1, stride = 0;
      for (size_t d = 0; d < full.size(); ++d) {
        if (full[d] != c) continue;
        perm.push_back(static_cast<int32_t>(d));
        n = xs[d];
        stride += span;
        span *= n;
      }
      grouped.push_back(span);
      out.push_back(n);
      strides.push_back(stride);
    }
    bool identity = true;
    for (size_t d = 0; d < perm.size(); ++d) identity &= perm[d] == static_cast<int32_t>(d);
    if (!identity) v = transpose(v, perm, tag + "diag_t");
    v = view(v, grouped, tag + "diag_v");
    const int y = new_value(g_, tag + "diag", value(v).dtype, out);
    Node n = step(tag + "diag", fb::OpFamily::Slice, {v}, y);
    n.op.tensor.starts.assign(out.size(), 0);
    n.op.tensor.steps = strides;
    out_.push_back(std::move(n));
    return y;
  }

  void einsum(Node node) {
    const TensorOpDesc& d = node.op.tensor;
    if (!d.einsum_a_in.empty())
      node.inputs[0] = diagonal(node.inputs[0], std::string(d.einsum_a_in.begin(),
                                                            d.einsum_a_in.end()), node.name + ":A");
    if (!d.einsum_b_in.empty())
      node.inputs[1] = diagonal(node.inputs[1], std::string(d.einsum_b_in.begin(),
                                                            d.einsum_b_in.end()), node.name + ":B");
    if (node.op.tensor.einsum_reduce) {
      einsum_reduce(std::move(node));
      return;
    }
    const TensorOpDesc& t = node.op.tensor;
    const std::string a(t.einsum_a.begin(), t.einsum_a.end());
    const std::string b(t.einsum_b.begin(), t.einsum_b.end());
    const std::string out(t.einsum_out.begin(), t.einsum_out.end());
    const EinsumPlan p = plan_einsum(a, b, out);
    int64_t dim[128] = {};
    for (size_t d = 0; d < a.size(); ++d)
      dim[static_cast<int>(a[d])] = value(node.inputs[0]).shape[d];
    for (size_t d = 0; d < b.size(); ++d)
      dim[static_cast<int>(b[d])] = value(node.inputs[1]).shape[d];
    const auto extent = [&](const std::string& letters) {
      int64_t n = 1;
      for (char c : letters) n *= dim[static_cast<int>(c)];
      return n;
    };
    Shape batch;
    for (char c : p.batch) batch.push_back(dim[static_cast<int>(c)]);
    const int64_t M = extent(p.m), N = extent(p.n), K = extent(p.k);
    // Operand `v` with indices `have` arranged as `batch + first + second` (or swapped, with
    // *trans set), viewed as [batch, rows, cols].
    const auto operand = [&](int v, const std::string& have, const std::string& first,
                             const std::string& second, int64_t rows, int64_t cols, bool* trans,
                             const std::string& tag) {
      *trans = false;
      if (have == p.batch + second + first && have != p.batch + first + second) {
        *trans = true;
        std::swap(rows, cols);
      } else if (have != p.batch + first + second) {
        const std::string want = p.batch + first + second;
        std::vector<int32_t> perm;
        for (char c : want) perm.push_back(static_cast<int32_t>(have.find(c)));
        v = transpose(v, perm, node.name + ":" + tag);
      }
      Shape shape = batch;
      shape.push_back(rows);
      shape.push_back(cols);
      return view(v, shape, node.name + ":" + tag + "3d");
    };
    Node gemm = step(node.name, fb::OpFamily::Gemm, {}, -1);
    gemm.op_type = "MatMul";
    const int A = operand(node.inputs[0], a, p.m, p.k, M, K, &gemm.op.trans_a, "A");
    const int B = operand(node.inputs[1], b, p.k, p.n, K, N, &gemm.op.trans_b, "B");
    gemm.inputs = {A, B};
    Shape product = batch;
    product.push_back(M);
    product.push_back(N);
    const int y = node.outputs[0];
    const std::string natural = p.batch + p.m + p.n;  // the product's index order
    Shape natural_shape = batch;
    for (char c : p.m + p.n) natural_shape.push_back(dim[static_cast<int>(c)]);
    const bool direct = natural == out && product == value(y).shape;
    gemm.outputs[0] =
        direct ? y : new_value(g_, node.name + ":product", DataType::kFloat32, product);
    const int z = gemm.outputs[0];
    out_.push_back(std::move(gemm));
    if (direct) return;
    if (natural == out) {
      view_into(z, y, node.name + ":Y");
      return;
    }
    const int w = view(z, natural_shape, node.name + ":nd");
    std::vector<int32_t> perm;
    for (char c : out) perm.push_back(static_cast<int32_t>(natural.find(c)));
    transpose(w, perm, node.name + ":Y", y);
  }

  Graph& g_;
  std::vector<Node>& out_;
};

}  // namespace

bool expand_tensor(Graph& g, Node& node, std::vector<Node>* out) {
  if (!node.op.resolved || node.op.tensor.expand == TensorExpand::kNone) return false;
  TensorExpander(g, out).expand(std::move(node));
  return true;
}

}  // namespace jetplan::converter
