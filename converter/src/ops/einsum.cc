// Einsum's check and expansion (see einsum.h).
#include "converter/src/ops/einsum.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph_edit.h"
#include "converter/src/ops/family_checks.h"
#include "converter/src/ops/op_helpers.h"

namespace jetplan::converter::ops {

EinsumPlan plan_einsum(const std::string& a, const std::string& b, const std::string& out) {
  EinsumPlan p;
  const auto has = [](const std::string& s, char c) { return s.find(c) != std::string::npos; };
  for (char c : out) {
    if (has(a, c) && has(b, c))
      p.batch += c;
    else if (has(a, c))
      p.m += c;
    else
      p.n += c;
  }
  for (char c : a)
    if (has(b, c) && !has(out, c)) p.k += c;
  return p;
}

std::string einsum_diagonal_term(const std::string& term) {
  std::string once, repeated;
  for (char c : term) {
    if (std::count(term.begin(), term.end(), c) == 1)
      once += c;
    else if (repeated.find(c) == std::string::npos)
      repeated += c;
  }
  return once + repeated;
}

namespace {

struct EinsumTerms {
  std::vector<std::string> inputs;
  std::string output;
  std::string ellipsis;  // the letters '...' became, left to right (the widest operand's)
};

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Each operand's '...' becomes letters the equation does not use: an operand of rank r with k
// letters has r - k such dims, and the j-th of them from the right gets the j-th spare letter
// in every operand (numpy aligns '...' dims from the right). The output's '...' (or, for an
// implicit output, its start) gets them in the same order.
std::string parse_einsum(const Graph& g, const Node& node, EinsumTerms* terms) {
  std::string eq;
  for (char c : attr_string(node, "equation", ""))
    if (c != ' ') eq += c;
  if (eq.empty()) fail("node ", node_label(node), ": the equation attribute is missing");
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms->inputs.push_back(lhs.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms->inputs.size() != node.inputs.size())
    fail("node ", node_label(node), ": equation '", eq, "' has ", terms->inputs.size(),
         " operands but the node ", node.inputs.size(), " inputs");
  bool used[128] = {};
  for (char c : eq)
    if (is_letter(c)) used[static_cast<int>(c)] = true;
  std::string spare;
  for (const char* range : {"zyxwvutsrqponmlkjihgfedcba", "ZYXWVUTSRQPONMLKJIHGFEDCBA"})
    for (const char* c = range; *c; ++c)
      if (!used[static_cast<int>(*c)]) spare += *c;
  size_t widest = 0;
  for (size_t i = 0; i < terms->inputs.size(); ++i) {
    std::string& t = terms->inputs[i];
    const size_t rank = input(g, node, i).shape.size();
    const size_t dots = t.find("...");
    if (dots == std::string::npos) continue;
    if (t.find("...", dots + 3) != std::string::npos)
      fail("node ", node_label(node), ": operand '", t, "' has more than one '...'");
    const size_t letters = t.size() - 3;
    if (rank < letters)
      fail("node ", node_label(node), ": operand '", t, "' does not match input ", i, " of rank ",
           rank);
    const size_t k = rank - letters;
    if (k > spare.size())
      return cat("'...' stands for ", k, " dims, more than the letters the equation leaves free");
    std::string expansion;
    for (size_t j = 0; j < k; ++j) expansion += spare[k - 1 - j];
    widest = std::max(widest, k);
    t = t.substr(0, dots) + expansion + t.substr(dots + 3);
  }
  for (size_t j = 0; j < widest; ++j) terms->ellipsis += spare[widest - 1 - j];
  const auto is_ellipsis = [&](char c) { return terms->ellipsis.find(c) != std::string::npos; };
  int count[128] = {};
  for (size_t i = 0; i < terms->inputs.size(); ++i) {
    const std::string& t = terms->inputs[i];
    if (t.size() != input(g, node, i).shape.size())
      fail("node ", node_label(node), ": operand '", t, "' does not match input ", i, " of rank ",
           input(g, node, i).shape.size());
    for (char c : t) {
      if (!is_letter(c))
        fail("node ", node_label(node), ": '", c, "' in equation '", eq, "' is not a letter");
      ++count[static_cast<int>(c)];
    }
  }
  if (arrow == std::string::npos) {
    // Implicit output: the '...' dims, then the indices that appear once, alphabetically.
    std::string once;
    for (int c = 0; c < 128; ++c)
      if (count[c] == 1 && !is_ellipsis(static_cast<char>(c))) once += static_cast<char>(c);
    std::sort(once.begin(), once.end());
    terms->output = terms->ellipsis + once;
  } else {
    terms->output = eq.substr(arrow + 2);
    const size_t dots = terms->output.find("...");
    if (dots != std::string::npos)
      terms->output =
          terms->output.substr(0, dots) + terms->ellipsis + terms->output.substr(dots + 3);
  }
  for (char c : terms->output) {
    if (!is_letter(c) || count[static_cast<int>(c)] == 0)
      fail("node ", node_label(node), ": output index '", c, "' is in no operand");
    if (std::count(terms->output.begin(), terms->output.end(), c) > 1)
      fail("node ", node_label(node), ": output index '", c, "' repeats");
  }
  return "";
}

}  // namespace

std::string check_einsum(Graph& g, Node& node) {
  if (std::string r = same_dtype_reason(g, node); !r.empty()) return r;
  EinsumTerms terms;
  if (std::string r = parse_einsum(g, node, &terms); !r.empty()) return r;
  if (terms.inputs.size() > 2) return cat(terms.inputs.size(), " operands (jetplan takes 1 or 2)");
  // Every index's extent, checked across operands and within one (a diagonal's dims).
  int64_t dim[128] = {};
  for (size_t i = 0; i < terms.inputs.size(); ++i) {
    const Shape& s = input(g, node, i).shape;
    for (size_t d = 0; d < s.size(); ++d) {
      const int c = terms.inputs[i][d];
      if (dim[c] != 0 && dim[c] != s[d]) {
        if (terms.ellipsis.find(static_cast<char>(c)) != std::string::npos)
          return cat(
              "the '...' dims differ between the operands (jetplan does not broadcast "
              "them)");
        fail("node ", node_label(node), ": index '", static_cast<char>(c), "' has extents ", dim[c],
             " and ", s[d]);
      }
      dim[c] = s[d];
    }
  }
  // The operands as the diagonals leave them.
  std::vector<std::string> red;
  bool diagonal = false;
  for (const std::string& t : terms.inputs) {
    red.push_back(einsum_diagonal_term(t));
    diagonal |= red.back() != t;
  }
  Shape out;
  for (char c : terms.output) out.push_back(dim[static_cast<int>(c)]);
  const auto in_output = [&](char c) { return terms.output.find(c) != std::string::npos; };
  bool sums = false;
  for (const std::string& t : red)
    for (char c : t) sums |= !in_output(c);
  const DataType dtype = input(g, node, 0).dtype;
  const auto set_terms = [&]() {
    node.op.expand = Expansion::kEinsum;
    node.op.einsum.a.assign(red[0].begin(), red[0].end());
    if (red.size() == 2) node.op.einsum.b.assign(red[1].begin(), red[1].end());
    node.op.einsum.out.assign(terms.output.begin(), terms.output.end());
    if (red[0] != terms.inputs[0])
      node.op.einsum.a_in.assign(terms.inputs[0].begin(), terms.inputs[0].end());
    if (red.size() == 2 && red[1] != terms.inputs[1])
      node.op.einsum.b_in.assign(terms.inputs[1].begin(), terms.inputs[1].end());
  };
  // Sums, two operands outside float32, and diagonals: the operands transposed to one index
  // order and viewed with 1s for the indices they lack, multiplied with broadcasting, then a
  // Reduce Sum over the summed indices. Multiplying and summing need float32 or float64 (the
  // Reduce family's dtypes); a diagonal alone moves bytes of any dtype.
  const auto resolve_reduce = [&]() -> std::string {
    if ((sums || red.size() == 2) && dtype != DataType::kFloat32 && dtype != DataType::kFloat64)
      return cat("Einsum with a sum or 2 operands of ", dtype_name(dtype),
                 " is not supported (float32 and float64)");
    node.op.family = fb::OpFamily::Transpose;  // placeholder: never fused
    node.op.einsum.reduce = true;
    set_terms();
    set_output_typed(g, node, 0, dtype, out);
    return "";
  };
  if (red.size() == 1) {
    if (sums || diagonal) return resolve_reduce();
    // A permutation of the operand: a Transpose (of any dtype).
    const std::string& a = red[0];
    std::vector<int64_t> perm;
    for (char c : terms.output) perm.push_back(static_cast<int64_t>(a.find(c)));
    node.attrs.erase("perm");
    Attribute attr;
    attr.kind = Attribute::Kind::kInts;
    attr.ints = perm;
    node.attrs["perm"] = attr;
    return check_transpose(g, node);
  }
  // Two operands: matrix products, which the Gemm family computes in float32.
  if (dtype != DataType::kFloat32) return resolve_reduce();
  const std::string &a = red[0], &b = red[1];
  for (char c : a + b)
    if (!in_output(c) && (a.find(c) == std::string::npos || b.find(c) == std::string::npos))
      return resolve_reduce();               // an index summed in one operand only
  node.op.family = fb::OpFamily::Transpose;  // placeholder: never fused
  set_terms();
  set_output_typed(g, node, 0, DataType::kFloat32, out);
  return "";
}

// ---- expansion

namespace {

// A two-operand contraction as batched matrix products: A to [batch, M, K] (or [batch, K, M],
// transposed by the Gemm), B to [batch, K, N] (or [batch, N, K]), both transposed first only
// when their indices come in neither order; the product [batch, M, N] is then viewed (and
// transposed, if needed) as the output.
// Einsum with sums or outside float32: every operand transposed to the order
// output indices + summed indices (those it has) and viewed with 1s for the others, their
// broadcast product (one operand: itself), and a Reduce Sum over the summed indices, viewed
// as the output.
void einsum_reduce(StepWriter& w, Node node) {
  const EinsumDesc& t = node.op.einsum;
  const std::string out(t.out.begin(), t.out.end());
  std::vector<std::string> terms = {std::string(t.a.begin(), t.a.end())};
  if (!t.b.empty()) terms.emplace_back(t.b.begin(), t.b.end());
  std::string order = out;
  int64_t dim[128] = {};
  for (size_t i = 0; i < terms.size(); ++i)
    for (size_t d = 0; d < terms[i].size(); ++d) {
      const char c = terms[i][d];
      dim[static_cast<int>(c)] = w.value(node.inputs[i]).shape[d];
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
    if (sorted != terms[i]) v = w.transpose(v, perm, tag + "t");
    Shape shape;
    for (char c : order)
      shape.push_back(terms[i].find(c) != std::string::npos ? dim[static_cast<int>(c)] : 1);
    xs.push_back(w.view(v, shape, tag + "v"));
  }
  const int y = node.outputs[0];
  int p = xs[0];
  if (xs.size() == 2) p = w.arith("Mul", xs[0], xs[1], -1, node.name + ":mul");
  if (order.size() == out.size()) {  // nothing summed
    w.view_into(p, y, node.name + ":Y");
    return;
  }
  Shape kept = full;  // the Reduce step's output: summed dims of extent 1
  Node r = StepWriter::step(node.name, fb::OpFamily::Reduce, {p}, -1);
  r.op_type = "ReduceSum";
  r.op.reduce.op = fb::ReduceOp::Sum;
  for (size_t d = out.size(); d < order.size(); ++d) {
    r.op.reduce.axes.push_back(static_cast<int32_t>(d));
    kept[d] = 1;
  }
  const int sum = new_value(w.graph(), node.name + ":sum", w.value(y).dtype, kept);
  r.outputs[0] = sum;
  w.add(std::move(r));
  w.view_into(sum, y, node.name + ":Y");
}

// Operand `v` with term `full`, in which an index repeats, as its diagonal (the term
// einsum_diagonal_term gives): the dims of each repeated index transposed next to each other
// and viewed as one of extent n^count, read by a Slice with the stride 1 + n + .. +
// n^(count-1), which walks from (0, .., 0) to (n-1, .., n-1) along the diagonal.
int diagonal(StepWriter& w, int v, const std::string& full, const std::string& tag) {
  const std::string reduced = einsum_diagonal_term(full);
  const Shape xs = w.value(v).shape;
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
  if (!identity) v = w.transpose(v, perm, tag + "diag_t");
  v = w.view(v, grouped, tag + "diag_v");
  const int y = new_value(w.graph(), tag + "diag", w.value(v).dtype, out);
  Node n = StepWriter::step(tag + "diag", fb::OpFamily::Slice, {v}, y);
  n.op.slice.starts.assign(out.size(), 0);
  n.op.slice.steps = strides;
  w.add(std::move(n));
  return y;
}

}  // namespace

void expand_einsum(StepWriter& w, Node node) {
  const EinsumDesc& d = node.op.einsum;
  if (!d.a_in.empty())
    node.inputs[0] =
        diagonal(w, node.inputs[0], std::string(d.a_in.begin(), d.a_in.end()), node.name + ":A");
  if (!d.b_in.empty())
    node.inputs[1] =
        diagonal(w, node.inputs[1], std::string(d.b_in.begin(), d.b_in.end()), node.name + ":B");
  if (node.op.einsum.reduce) {
    einsum_reduce(w, std::move(node));
    return;
  }
  const EinsumDesc& t = node.op.einsum;
  const std::string a(t.a.begin(), t.a.end());
  const std::string b(t.b.begin(), t.b.end());
  const std::string out(t.out.begin(), t.out.end());
  const EinsumPlan p = plan_einsum(a, b, out);
  int64_t dim[128] = {};
  for (size_t d = 0; d < a.size(); ++d)
    dim[static_cast<int>(a[d])] = w.value(node.inputs[0]).shape[d];
  for (size_t d = 0; d < b.size(); ++d)
    dim[static_cast<int>(b[d])] = w.value(node.inputs[1]).shape[d];
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
      v = w.transpose(v, perm, node.name + ":" + tag);
    }
    Shape shape = batch;
    shape.push_back(rows);
    shape.push_back(cols);
    return w.view(v, shape, node.name + ":" + tag + "3d");
  };
  Node gemm = StepWriter::step(node.name, fb::OpFamily::Gemm, {}, -1);
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
  const bool direct = natural == out && product == w.value(y).shape;
  gemm.outputs[0] =
      direct ? y : new_value(w.graph(), node.name + ":product", DataType::kFloat32, product);
  const int z = gemm.outputs[0];
  w.add(std::move(gemm));
  if (direct) return;
  if (natural == out) {
    w.view_into(z, y, node.name + ":Y");
    return;
  }
  const int nd = w.view(z, natural_shape, node.name + ":nd");
  std::vector<int32_t> perm;
  for (char c : out) perm.push_back(static_cast<int32_t>(natural.find(c)));
  w.transpose(nd, perm, node.name + ":Y", y);
}

}  // namespace jetplan::converter::ops
