#include "converter/src/passes/strided_view.h"

#include <cstddef>

namespace jetplan::converter {
namespace {

using Group = std::vector<SubDim>;

StridedLayout dense(const Shape& shape) {
  StridedLayout l;
  l.dims.resize(shape.size());
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    if (shape[i] != 1) l.dims[i].push_back({shape[i], stride});
    stride *= shape[i];
  }
  return l;
}

int64_t extent_of(const Group& g) {
  int64_t e = 1;
  for (const SubDim& s : g) e *= s.extent;
  return e;
}

// The sub-dims of every group, outermost first, regrouped into `shape`'s dims; a sub-dim that
// straddles two new dims is split (its outer part strides by the inner part's extent).
bool reshape(StridedLayout* l, const Shape& shape) {
  Group flat;
  for (const Group& g : l->dims) flat.insert(flat.end(), g.begin(), g.end());
  std::vector<Group> dims(shape.size());
  size_t at = 0;
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t need = shape[d];
    if (need <= 0) return false;
    while (need > 1) {
      if (at == flat.size()) return false;
      SubDim& s = flat[at];
      if (s.extent <= need) {
        if (need % s.extent != 0) return false;
        need /= s.extent;
        dims[d].push_back(s);
        ++at;
      } else {
        if (s.extent % need != 0) return false;
        const int64_t inner = s.extent / need;
        dims[d].push_back({need, s.stride * inner});
        s.extent = inner;
        need = 1;
      }
    }
  }
  if (at != flat.size()) return false;
  l->dims = std::move(dims);
  return true;
}

// Narrows dim `d` to `extent` elements from `start` by `step` (>= 1): one sub-dim only, unless
// the dim is kept whole.
bool narrow(StridedLayout* l, size_t d, int64_t start, int64_t step, int64_t extent) {
  Group& g = l->dims[d];
  if (start == 0 && step == 1 && extent == extent_of(g)) return true;
  if (step < 1 || start < 0 || g.size() > 1) return false;
  if (g.empty()) return start == 0 && extent == 1;
  l->offset += start * g[0].stride;
  g[0].stride *= step;
  g[0].extent = extent;
  if (extent == 1) g.clear();
  return extent >= 1;
}

bool picks_elements(const Graph& g, const Node& n, DataType dtype) {
  if (n.dead || !n.op.resolved || n.op.act.kind != fb::ActivationKind::None ||
      n.inputs.empty() || n.inputs[0] < 0 || g.values[n.inputs[0]].dtype != dtype)
    return false;
  switch (n.op.family) {
    case fb::OpFamily::Copy:
    case fb::OpFamily::Transpose:
      return n.op.expand == Expansion::kNone;
    case fb::OpFamily::Slice:
      return n.op.expand == Expansion::kNone || n.op.expand == Expansion::kSplit;
    case fb::OpFamily::Gather: {
      if (n.op.expand != Expansion::kNone || n.inputs.size() != 2) return false;
      const Value& idx = g.values[n.inputs[1]];
      return idx.is_constant && idx.shape.size() <= 1 && shape_count(idx.shape) == 1 &&
             (idx.dtype == DataType::kInt64 || idx.dtype == DataType::kInt32);
    }
    default:
      return false;
  }
}

// `l` (the layout of n's input 0) becomes the layout of n's output `out`.
bool apply(const Graph& g, const Node& n, int out, StridedLayout* l) {
  const Shape& in_shape = g.values[n.inputs[0]].shape;
  const Shape& out_shape = g.values[out].shape;
  switch (n.op.family) {
    case fb::OpFamily::Copy:
      return reshape(l, out_shape);
    case fb::OpFamily::Transpose: {
      if (n.op.perm.size() != l->dims.size()) return false;
      std::vector<Group> dims;
      for (int32_t p : n.op.perm) dims.push_back(l->dims[static_cast<size_t>(p)]);
      l->dims = std::move(dims);
      return true;
    }
    case fb::OpFamily::Gather: {
      const size_t axis = static_cast<size_t>(n.op.axis);
      if (axis >= l->dims.size()) return false;
      int64_t idx = read_ints(g.values[n.inputs[1]])[0];
      const int64_t extent = in_shape[axis];
      if (idx < 0) idx += extent;
      if (idx < 0 || idx >= extent) return false;
      // The index unravelled over the group's sub-dims, innermost fastest.
      Group& grp = l->dims[axis];
      for (size_t i = grp.size(); i-- > 0;) {
        l->offset += (idx % grp[i].extent) * grp[i].stride;
        idx /= grp[i].extent;
      }
      grp.clear();
      if (g.values[n.inputs[1]].shape.empty())
        l->dims.erase(l->dims.begin() + static_cast<std::ptrdiff_t>(axis));
      return true;
    }
    case fb::OpFamily::Slice: {
      if (n.op.expand == Expansion::kSplit) {
        const size_t axis = static_cast<size_t>(n.op.axis);
        int64_t start = 0;
        size_t k = 0;
        while (k < n.outputs.size() && n.outputs[k] != out) start += n.op.slice.split[k++];
        if (k == n.outputs.size() || axis >= l->dims.size()) return false;
        return narrow(l, axis, start, 1, n.op.slice.split[k]);
      }
      if (n.op.slice.starts.size() != l->dims.size()) return false;
      for (size_t d = 0; d < l->dims.size(); ++d)
        if (!narrow(l, d, n.op.slice.starts[d], n.op.slice.steps[d], out_shape[d])) return false;
      return true;
    }
    default:
      return false;
  }
}

}  // namespace

StridedView deepest_strided_view(const Graph& g, int value) {
  const DataType dtype = g.values[value].dtype;
  // Back from `value`: chain[i] makes the input of chain[i - 1] (chain[0] makes `value`).
  std::vector<const Node*> chain;
  std::vector<int> made = {value};  // made[i]: the output of chain[i] on the path
  for (int v = value; g.values[v].producer >= 0;) {
    const Node& n = g.nodes[static_cast<size_t>(g.values[v].producer)];
    if (!picks_elements(g, n, dtype)) break;
    chain.push_back(&n);
    v = n.inputs[0];
    made.push_back(v);
  }
  // The deepest source whose chain forward gives a layout.
  for (size_t depth = chain.size(); depth > 0; --depth) {
    StridedView view;
    view.source = made[depth];
    view.layout = dense(g.values[view.source].shape);
    bool ok = true;
    for (size_t i = depth; ok && i-- > 0;) ok = apply(g, *chain[i], made[i], &view.layout);
    if (!ok) continue;
    view.chain.assign(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(depth));
    return view;
  }
  StridedView self;
  self.source = value;
  self.layout = dense(g.values[value].shape);
  return self;
}

bool single_stride(const StridedLayout& layout, size_t dim, SubDim* out) {
  const Group& g = layout.dims[dim];
  if (g.empty()) {
    *out = {1, 0};
    return true;
  }
  SubDim merged = g.back();
  for (size_t i = g.size() - 1; i-- > 0;) {
    if (g[i].stride != merged.extent * merged.stride) return false;
    merged.extent *= g[i].extent;
  }
  *out = merged;
  return true;
}

}  // namespace jetplan::converter
