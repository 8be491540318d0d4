// Einsum's check: the equation parsed ('...' and implicit outputs resolved to letters), then one
// of three ways, each expanded at legalize (support_group_tensor_expand.cc):
// - one operand, a permutation: a Transpose (any dtype);
// - two float32 operands contracted: batched matrix products (Gemm);
// - otherwise (sums, other dtypes, diagonals): transposes, views, a broadcast product and a
//   Reduce Sum (float32 and float64 where something is multiplied or summed).
// An index repeated within one operand ("ii", "...ii", "bij,bjj") takes that operand's diagonal
// first: its repeated dims are transposed next to each other, viewed as one, and sliced with
// the stride that walks the diagonal.
#include <algorithm>
#include <string>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/support_group_tensor.h"
#include "converter/src/support_ops.h"

namespace jetplan::converter {
namespace tensor {

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

using support::input;
using support::set_output_typed;

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
      fail("node ", node_label(node), ": operand '", t, "' does not match input ", i,
           " of rank ", rank);
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
      terms->output = terms->output.substr(0, dots) + terms->ellipsis +
                      terms->output.substr(dots + 3);
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
  if (std::string r = same_dtype_of(g, node); !r.empty()) return r;
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
          return cat("the '...' dims differ between the operands (jetplan does not broadcast "
                     "them)");
        fail("node ", node_label(node), ": index '", static_cast<char>(c), "' has extents ",
             dim[c], " and ", s[d]);
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
    node.op.tensor.expand = TensorExpand::kEinsum;
    node.op.tensor.einsum_a.assign(red[0].begin(), red[0].end());
    if (red.size() == 2) node.op.tensor.einsum_b.assign(red[1].begin(), red[1].end());
    node.op.tensor.einsum_out.assign(terms.output.begin(), terms.output.end());
    if (red[0] != terms.inputs[0])
      node.op.tensor.einsum_a_in.assign(terms.inputs[0].begin(), terms.inputs[0].end());
    if (red.size() == 2 && red[1] != terms.inputs[1])
      node.op.tensor.einsum_b_in.assign(terms.inputs[1].begin(), terms.inputs[1].end());
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
    node.op.tensor.einsum_reduce = true;
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
    return check_transpose_of(g, node);
  }
  // Two operands: matrix products, which the Gemm family computes in float32.
  if (dtype != DataType::kFloat32) return resolve_reduce();
  const std::string &a = red[0], &b = red[1];
  for (char c : a + b)
    if (!in_output(c) && (a.find(c) == std::string::npos || b.find(c) == std::string::npos))
      return resolve_reduce();  // an index summed in one operand only
  node.op.family = fb::OpFamily::Transpose;  // placeholder: never fused
  set_terms();
  set_output_typed(g, node, 0, DataType::kFloat32, out);
  return "";
}

}  // namespace tensor
}  // namespace jetplan::converter
