// The constant folder's shared pieces (fold_eval.h): the size guard, numpy broadcasting of
// indices, and the attribute rules of the tensor ops that the folder and the support checks
// (converter/src/ops/) share, so that a folded node and a step compute the same thing.
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <string>

#include "converter/src/ir/error.h"
#include "converter/src/fold/eval.h"
#include "converter/src/passes/passes.h"
#include "converter/src/ir/shape_ops.h"
#include "converter/src/ir/sorted_names.h"
#include "kernels/cpu/bfloat16.h"
#include "kernels/cpu/half.h"
#include "kernels/kernels.h"

namespace jetplan::converter::fold {

namespace {

// The axes a Slice or Pad node lists, taken one by one in the node's order: each normalized
// (negative counts from the end), and ConvertError for one listed twice, naming what the node
// does to it ("sliced", "padded").
class AxesOnce {
 public:
  AxesOnce(const Node& node, int64_t rank, const char* done)
      : node_(node), rank_(rank), done_(done), seen_(rank, false) {}
  int64_t take(int64_t listed) {
    const int64_t axis = normalize_axis(node_, listed, rank_);
    if (seen_[axis]) fail("node ", node_label(node_), ": axis ", axis, " is ", done_, " twice");
    seen_[axis] = true;
    return axis;
  }

 private:
  const Node& node_;
  int64_t rank_;
  const char* done_;
  std::vector<bool> seen_;
};

}  // namespace

bool fits(const Shape& shape, DataType dtype) {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t d : shape) {
    if (d < 0) return false;
    if (d != 0 && bytes > kMaxFoldBytes / static_cast<uint64_t>(d)) return false;
    bytes *= static_cast<uint64_t>(d);
  }
  return bytes <= kMaxFoldBytes;
}

std::vector<int64_t> broadcast_index(const Shape& in, const Shape& out) {
  const size_t rank = out.size();
  const size_t lead = rank - in.size();
  std::vector<int64_t> stride(rank, 0);
  int64_t s = 1;
  for (size_t i = rank; i-- > lead;) {
    const int64_t d = in[i - lead];
    stride[i] = d == 1 ? 0 : s;
    s *= d;
  }
  const int64_t total = shape_count(out);
  std::vector<int64_t> index(total);
  std::vector<int64_t> counter(rank, 0);
  int64_t at = 0;
  for (int64_t k = 0; k < total; ++k) {
    index[k] = at;
    for (size_t i = rank; i-- > 0;) {
      at += stride[i];
      if (++counter[i] < out[i]) break;
      at -= stride[i] * out[i];
      counter[i] = 0;
    }
  }
  return index;
}

// ---- Rules of the tensor ops (fold_eval.h) ----

namespace {

// Input `i` of the node when it is present and constant; nullptr when it is absent (or an
// omitted optional input); false with *why when the model computes it at run time.
bool constant_input(const Graph& g, const Node& node, size_t i, const char* what,
                    const Value** out, std::string* why) {
  *out = nullptr;
  if (i >= node.inputs.size() || node.inputs[i] < 0) return true;
  const Value& v = g.values[node.inputs[i]];
  if (!v.is_constant) {
    *why = cat("its ", what, " input '", v.name, "' is computed at run time (jetplan needs it constant)");
    return false;
  }
  // float16 and bfloat16 too: Pad's constant_value has the data's dtype (read with numbers()).
  if (!is_numeric(v.dtype) && v.dtype != DataType::kFloat16 && v.dtype != DataType::kBFloat16)
    fail("node ", node_label(node), ": its ", what, " input '", v.name, "' is ",
         dtype_name(v.dtype), ", not a number type");
  *out = &v;
  return true;
}

}  // namespace

std::vector<int32_t> transpose_perm(const Node& node, int64_t rank) {
  std::vector<int64_t> perm = attr_ints(node, "perm", {});
  if (!has_attr(node, "perm"))
    for (int64_t i = rank - 1; i >= 0; --i) perm.push_back(i);
  std::vector<bool> seen(rank, false);
  bool ok = static_cast<int64_t>(perm.size()) == rank;
  for (size_t i = 0; ok && i < perm.size(); ++i) {
    ok = perm[i] >= 0 && perm[i] < rank && !seen[perm[i]];
    if (ok) seen[perm[i]] = true;
  }
  if (!ok)
    fail("node ", node_label(node), ": perm ", shape_str(perm), " is not a permutation of the ",
         rank, " input dims");
  return std::vector<int32_t>(perm.begin(), perm.end());
}

bool slice_spec(const Graph& g, const Node& node, const Shape& x, SliceSpec* spec,
                std::string* why) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> starts, ends, axes, steps;
  bool have_axes = false, have_steps = false;
  if (g.opset < 10) {
    if (!has_attr(node, "starts") || !has_attr(node, "ends"))
      fail("node ", node_label(node), ": the starts or ends attribute is missing");
    starts = attr_ints(node, "starts", {});
    ends = attr_ints(node, "ends", {});
    axes = attr_ints(node, "axes", {});
    have_axes = has_attr(node, "axes");
  } else {
    const char* names[] = {"starts", "ends", "axes", "steps"};
    std::vector<int64_t>* lists[] = {&starts, &ends, &axes, &steps};
    for (size_t i = 0; i < 4; ++i) {
      const Value* v;
      if (!constant_input(g, node, i + 1, names[i], &v, why)) return false;
      if (v == nullptr && i < 2)
        fail("node ", node_label(node), ": the ", names[i], " input is missing");
      if (v != nullptr) *lists[i] = read_ints(*v);
      if (i == 2) have_axes = v != nullptr;
      if (i == 3) have_steps = v != nullptr;
    }
  }
  const size_t n = starts.size();
  if (!have_axes)
    for (size_t i = 0; i < n; ++i) axes.push_back(static_cast<int64_t>(i));
  if (!have_steps) steps.assign(n, 1);
  if (ends.size() != n || axes.size() != n || steps.size() != n)
    fail("node ", node_label(node), ": starts, ends, axes and steps differ in length (", n, ", ",
         ends.size(), ", ", axes.size(), ", ", steps.size(), ")");
  spec->starts.assign(rank, 0);
  spec->steps.assign(rank, 1);
  spec->out = x;
  AxesOnce once(node, rank, "sliced");
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = once.take(axes[k]);
    const int64_t dim = x[axis], step = steps[k];
    if (step == 0) fail("node ", node_label(node), ": Slice step 0 on axis ", axis);
    // Negative values count from the end; anything before the start maps to -1, which the
    // clamps below treat as ONNX does (clamping before the addition keeps INT64_MIN in range).
    int64_t s = starts[k], e = ends[k];
    if (s < 0) s = s < -dim ? -1 : s + dim;
    if (e < 0) e = e < -dim ? -1 : e + dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    // ceil(|e - s| / |step|) without overflow for any step.
    const int64_t span = step > 0 ? e - s : s - e;
    const int64_t stride = step > 0 ? step : (step == INT64_MIN ? INT64_MAX : -step);
    spec->starts[axis] = s;
    spec->steps[axis] = step;
    spec->out[axis] = span > 0 ? (span - 1) / stride + 1 : 0;
  }
  return true;
}

bool split_spec(const Graph& g, const Node& node, const Shape& x, SplitSpec* spec,
                std::string* why) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) fail("node ", node_label(node), ": Split of a scalar");
  spec->axis = normalize_axis(node, attr_int(node, "axis", 0), rank);
  const int64_t dim = x[spec->axis];
  const int64_t outputs = static_cast<int64_t>(node.outputs.size());
  spec->sizes.clear();
  if (g.opset < 13) {
    spec->sizes = attr_ints(node, "split", {});
  } else {
    const Value* split;
    if (!constant_input(g, node, 1, "split", &split, why)) return false;
    if (split != nullptr) spec->sizes = read_ints(*split);
    if (split != nullptr && has_attr(node, "num_outputs"))
      fail("node ", node_label(node), ": give the split input or num_outputs, not both");
  }
  if (spec->sizes.empty() && has_attr(node, "num_outputs")) {
    // Opset 18: equal parts of ceil(dim / n), the last one smaller when they do not divide.
    const int64_t parts = attr_int(node, "num_outputs", 0);
    if (parts != outputs)
      fail("node ", node_label(node), ": num_outputs is ", parts, " but the node has ", outputs,
           " outputs");
    const int64_t chunk = (dim + parts - 1) / parts;
    for (int64_t i = 0; i < parts; ++i)
      spec->sizes.push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
  } else if (spec->sizes.empty()) {
    if (outputs < 1 || dim % outputs != 0)
      fail("node ", node_label(node), ": dim ", dim, " does not split into ", outputs,
           " equal parts");
    spec->sizes.assign(outputs, dim / outputs);
  }
  int64_t total = 0;
  for (int64_t s : spec->sizes) {
    if (s < 0 || s > dim) fail("node ", node_label(node), ": split size ", s, " is out of range");
    total += s;
  }
  if (static_cast<int64_t>(spec->sizes.size()) != outputs || total != dim)
    fail("node ", node_label(node), ": split ", shape_str(spec->sizes), " does not cut dim ", dim,
         " into ", outputs, " outputs");
  return true;
}

std::vector<SliceSpec> split_slices(const Shape& x, const SplitSpec& split) {
  std::vector<SliceSpec> slices;
  SliceSpec spec;
  spec.starts.assign(x.size(), 0);
  spec.steps.assign(x.size(), 1);
  spec.out = x;
  for (int64_t size : split.sizes) {
    spec.out[split.axis] = size;
    slices.push_back(spec);
    spec.starts[split.axis] += size;
  }
  return slices;
}

bool pad_value_bytes(double v, DataType dtype, unsigned char out[8]) {
  auto integral_in = [&](double lo, double hi) {
    return std::isfinite(v) && v == std::trunc(v) && v >= lo && v <= hi;
  };
  auto store = [&](auto value) { std::memcpy(out, &value, sizeof value); };
  switch (dtype) {
    case DataType::kFloat32: store(static_cast<float>(v)); return true;
    case DataType::kFloat16: store(kernels::half_from_double(v)); return true;
    case DataType::kBFloat16:
      store(kernels::bfloat16_from_float(static_cast<float>(v)));  // as Cast makes it
      return true;
    case DataType::kFloat64: store(v); return true;
    case DataType::kInt8:
      if (!integral_in(-128, 127)) return false;
      store(static_cast<int8_t>(v));
      return true;
    case DataType::kUInt8:
    case DataType::kBool:
      if (!integral_in(0, dtype == DataType::kBool ? 1 : 255)) return false;
      store(static_cast<uint8_t>(v));
      return true;
    case DataType::kInt32:
      if (!integral_in(-2147483648.0, 2147483647.0)) return false;
      store(static_cast<int32_t>(v));
      return true;
    case DataType::kInt64:
      if (!integral_in(-9223372036854775808.0, 9223372036854774784.0)) return false;
      store(static_cast<int64_t>(v));
      return true;
    default: return false;
  }
}

bool pad_spec(const Graph& g, const Node& node, const Shape& x, DataType dtype, PadSpec* spec,
              std::string* why) {
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> pads, axes;
  double value = 0.0;
  if (g.opset < 11) {
    const char* name = g.opset < 2 ? "paddings" : "pads";
    if (!has_attr(node, name)) fail("node ", node_label(node), ": the ", name, " attribute is missing");
    pads = attr_ints(node, name, {});
    value = attr_float(node, "value", 0.f);
  } else {
    const Value *p, *c, *a;
    if (!constant_input(g, node, 1, "pads", &p, why) ||
        !constant_input(g, node, 2, "constant_value", &c, why) ||
        !constant_input(g, node, 3, "axes", &a, why))
      return false;
    if (p == nullptr) fail("node ", node_label(node), ": the pads input is missing");
    pads = read_ints(*p);
    if (c != nullptr) {
      if (shape_count(c->shape) != 1)
        fail("node ", node_label(node), ": constant_value has ", shape_count(c->shape),
             " elements, not one");
      if (c->dtype != dtype)
        fail("node ", node_label(node), ": constant_value is ", dtype_name(c->dtype),
             " but the input is ", dtype_name(dtype));
      if (is_floating(c->dtype) || c->dtype == DataType::kFloat16 ||
          c->dtype == DataType::kBFloat16) {
        value = numbers(c->dtype, c->data)[0];
      } else {
        const int64_t i = read_ints(*c)[0];
        value = static_cast<double>(i);
        if (static_cast<int64_t>(value) != i) {
          *why = cat("constant_value ", i, " has no exact double (the plan carries a double)");
          return false;
        }
      }
    }
    if (a != nullptr) axes = read_ints(*a);
  }
  if (axes.empty())
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  const std::string mode = attr_string(node, "mode", "constant");
  if (mode == "constant")
    spec->mode = fb::PadMode::Constant;
  else if (mode == "reflect")
    spec->mode = fb::PadMode::Reflect;
  else if (mode == "edge")
    spec->mode = fb::PadMode::Edge;
  else if (mode == "wrap")
    spec->mode = fb::PadMode::Wrap;
  else
    fail("node ", node_label(node), ": unknown pad mode '", mode, "'");
  const size_t n = axes.size();
  if (pads.size() != 2 * n)
    fail("node ", node_label(node), ": pads has ", pads.size(), " entries, expected ", 2 * n);
  spec->begin.assign(rank, 0);
  spec->out = x;
  AxesOnce once(node, rank, "padded");
  for (size_t k = 0; k < n; ++k) {
    const int64_t axis = once.take(axes[k]);
    const int64_t begin = pads[k], end = pads[k + n];
    if (begin < -kMaxTensorBytes || begin > kMaxTensorBytes || end < -kMaxTensorBytes ||
        end > kMaxTensorBytes || x[axis] + begin + end < 0)
      fail("node ", node_label(node), ": pads ", begin, " and ", end, " do not fit dim ", x[axis]);
    spec->begin[axis] = begin;
    spec->out[axis] = x[axis] + begin + end;
    const int64_t kept = x[axis] - std::max<int64_t>(0, -begin) - std::max<int64_t>(0, -end);
    if (spec->mode != fb::PadMode::Constant && kept <= 0 && spec->out[axis] > 0) {
      *why = cat(mode, " padding of dim ", axis, " after cropping it to nothing");
      return false;
    }
  }
  unsigned char bytes[8];
  if (!pad_value_bytes(value, dtype, bytes))
    fail("node ", node_label(node), ": pad value ", value, " does not fit ", dtype_name(dtype));
  spec->value = value;
  return true;
}

bool tile_shape(const Graph& g, const Node& node, const Shape& x, Shape* out, std::string* why) {
  const Value* r;
  if (!constant_input(g, node, 1, "repeats", &r, why)) return false;
  if (r == nullptr) fail("node ", node_label(node), ": the repeats input is missing");
  const std::vector<int64_t> repeats = read_ints(*r);
  if (repeats.size() != x.size())
    fail("node ", node_label(node), ": repeats has ", repeats.size(), " entries for rank ",
         x.size());
  *out = x;
  for (size_t d = 0; d < x.size(); ++d) {
    if (repeats[d] < 0 || (x[d] != 0 && repeats[d] > kMaxTensorBytes / x[d]))
      fail("node ", node_label(node), ": repeats ", repeats[d], " is out of range");
    (*out)[d] = x[d] * repeats[d];
  }
  return true;
}

bool reduce_spec(const Graph& g, const Node& node, const Shape& x, ReduceSpec* spec,
                 std::string* why) {
  struct ReduceName {
    const char* op_type;
    fb::ReduceOp op;
  };
  constexpr ReduceName kReduceOps[] = {
      {"ReduceL1", fb::ReduceOp::L1},         {"ReduceL2", fb::ReduceOp::L2},
      {"ReduceLogSum", fb::ReduceOp::LogSum}, {"ReduceLogSumExp", fb::ReduceOp::LogSumExp},
      {"ReduceMax", fb::ReduceOp::Max},       {"ReduceMean", fb::ReduceOp::Mean},
      {"ReduceMin", fb::ReduceOp::Min},       {"ReduceProd", fb::ReduceOp::Prod},
      {"ReduceSum", fb::ReduceOp::Sum},       {"ReduceSumSquare", fb::ReduceOp::SumSquare},
  };
  bool known = false;
  for (const ReduceName& r : kReduceOps)
    if (node.op_type == r.op_type) spec->op = r.op, known = true;
  if (!known) fail("node ", node_label(node), ": ", node.op_type, " is no Reduce op");
  const bool axes_input = g.opset >= 18 || (g.opset >= 13 && node.op_type == "ReduceSum");
  std::vector<int64_t> axes;
  if (axes_input) {
    if (node.inputs.size() > 1 && node.inputs[1] >= 0) {
      const Value& a = g.values[size_t(node.inputs[1])];
      if (!a.is_constant) {
        *why = "its axes input is computed at run time (jetplan needs it constant)";
        return false;
      }
      axes = read_ints(a);
    }
  } else {
    axes = attr_ints(node, "axes", {});
  }
  const auto rank = static_cast<int64_t>(x.size());
  spec->identity = axes.empty() && axes_input && attr_int(node, "noop_with_empty_axes", 0) != 0;
  spec->axes.clear();
  for (int64_t a : axes) spec->axes.push_back(static_cast<int32_t>(normalize_axis(node, a, rank)));
  std::sort(spec->axes.begin(), spec->axes.end());
  if (std::adjacent_find(spec->axes.begin(), spec->axes.end()) != spec->axes.end())
    fail("node ", node_label(node), ": axes ", shape_str(axes), " name a dim twice");
  if (axes.empty())
    for (int32_t d = 0; d < rank; ++d) spec->axes.push_back(d);
  const bool keepdims = attr_int(node, "keepdims", 1) != 0;
  spec->kept = x;
  spec->out.clear();
  for (int32_t d : spec->axes) spec->kept[size_t(d)] = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (keepdims || !std::binary_search(spec->axes.begin(), spec->axes.end(), d))
      spec->out.push_back(spec->kept[size_t(d)]);
  return true;
}

SpaceDepthSpec space_depth_spec(const Node& node, const Shape& x) {
  if (x.size() != 4) fail("node ", node_label(node), ": input has rank ", x.size(), ", not 4");
  if (!has_attr(node, "blocksize")) fail("node ", node_label(node), ": blocksize is missing");
  const int64_t b = attr_int(node, "blocksize", 0);
  if (b < 1 || b > (int64_t{1} << 20))
    fail("node ", node_label(node), ": blocksize ", b, " is out of range");
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  SpaceDepthSpec spec;
  if (node.op_type == "DepthToSpace") {
    if (c % (b * b) != 0)
      fail("node ", node_label(node), ": channels ", c, " are not a multiple of blocksize^2 ",
           b * b);
    const std::string mode = attr_string(node, "mode", "DCR");
    if (mode == "DCR") {
      spec.view = {n, b, b, c / (b * b), h, w};
      spec.perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      spec.view = {n, c / (b * b), b, b, h, w};
      spec.perm = {0, 1, 4, 2, 5, 3};
    } else {
      fail("node ", node_label(node), ": unknown mode '", mode, "' (DCR or CRD)");
    }
    spec.out = {n, c / (b * b), h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      fail("node ", node_label(node), ": height ", h, " and width ", w,
           " are not multiples of blocksize ", b);
    // Opset 28 adds the mode: DCR, the default, is the order of the earlier opsets.
    const std::string mode = attr_string(node, "mode", "DCR");
    spec.view = {n, c, h / b, b, w / b, b};
    if (mode == "DCR")
      spec.perm = {0, 3, 5, 1, 2, 4};
    else if (mode == "CRD")
      spec.perm = {0, 1, 3, 5, 2, 4};
    else
      fail("node ", node_label(node), ": unknown mode '", mode, "' (DCR or CRD)");
    spec.out = {n, c * b * b, h / b, w / b};
  }
  return spec;
}

}  // namespace jetplan::converter::fold
