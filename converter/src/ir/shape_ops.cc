#include "converter/src/ir/shape_ops.h"

#include <algorithm>

#include "converter/src/ir/error.h"

namespace jetplan::converter {

int64_t normalize_axis(const Node& node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    fail("node ", node_label(node), ": axis ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

bool broadcast_shapes(const Shape& a, const Shape& b, Shape* out) {
  const size_t rank = std::max(a.size(), b.size());
  Shape result(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    result[i] = da == 1 ? db : da;
  }
  *out = std::move(result);
  return true;
}

Shape broadcast_or_fail(const Node& node, const Shape& a, const Shape& b) {
  Shape out;
  if (!broadcast_shapes(a, b, &out))
    fail("node ", node_label(node), ": shape mismatch: ", shape_str(a), " and ", shape_str(b),
         " do not broadcast");
  return out;
}

Shape reshape_shape(const Node& node, const Shape& in, const std::vector<int64_t>& spec,
                    bool allow_zero) {
  Shape out(spec.size());
  int infer_at = -1;
  int64_t known = 1;
  const int64_t total = shape_count(in);
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == 0 && !allow_zero) {
      if (i >= in.size())
        fail("node ", node_label(node), ": shape entry ", i, " is 0 but the input ", shape_str(in),
             " has no dim ", i);
      d = in[i];
    }
    if (d == -1) {
      if (infer_at >= 0) fail("node ", node_label(node), ": shape has more than one -1");
      infer_at = static_cast<int>(i);
      continue;
    }
    if (d < 0) fail("node ", node_label(node), ": shape entry ", d, " is invalid");
    out[i] = d;
    // The product can no longer match (or, for an empty input, no longer be a plan tensor's):
    // stop before overflow.
    if (d > 0 && known > (total > 0 ? total : kMaxTensorBytes) / d)
      fail("node ", node_label(node), ": cannot reshape ", shape_str(in), " (", total,
           " elements) to ", shape_str(spec));
    known *= d;
  }
  if (infer_at >= 0) {
    if (known == 0 || total % known != 0)
      fail("node ", node_label(node), ": cannot reshape ", shape_str(in), " (", total,
           " elements) to ", shape_str(spec));
    out[infer_at] = total / known;
  } else if (known != total) {
    fail("node ", node_label(node), ": cannot reshape ", shape_str(in), " (", total,
         " elements) to ", shape_str(spec));
  }
  return out;
}

Shape flatten_shape(const Node& node, const Shape& in, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(in.size());
  if (axis < -rank || axis > rank)
    fail("node ", node_label(node), ": axis ", axis, " is out of range for rank ", rank);
  if (axis < 0) axis += rank;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i) (i < axis ? outer : inner) *= in[i];
  return {outer, inner};
}

Shape squeeze_shape(const Node& node, const Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<bool> drop(in.size(), false);
  if (axes.empty()) {
    for (size_t i = 0; i < in.size(); ++i) drop[i] = in[i] == 1;
  }
  for (int64_t a : axes) {
    const int64_t i = normalize_axis(node, a, rank);
    if (in[i] != 1)
      fail("node ", node_label(node), ": cannot squeeze dim ", i, " of ", shape_str(in),
           ": it is not 1");
    drop[i] = true;
  }
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

Shape unsqueeze_shape(const Node& node, const Shape& in, const std::vector<int64_t>& axes) {
  const int64_t rank = static_cast<int64_t>(in.size() + axes.size());
  std::vector<bool> inserted(rank, false);
  for (int64_t a : axes) {
    const int64_t i = normalize_axis(node, a, rank);
    if (inserted[i]) fail("node ", node_label(node), ": axis ", a, " is repeated");
    inserted[i] = true;
  }
  Shape out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i) out.push_back(inserted[i] ? 1 : in[next++]);
  return out;
}

bool squeeze_axes(const Graph& g, const Node& node, std::vector<int64_t>* axes) {
  if (g.opset < 13) {
    *axes = attr_ints(node, "axes", {});
    return true;
  }
  axes->clear();
  if (node.inputs.size() < 2 || node.inputs[1] < 0) return true;
  const Value& v = g.values[node.inputs[1]];
  if (!v.is_constant) return false;
  *axes = read_ints(v);
  return true;
}

}  // namespace jetplan::converter
