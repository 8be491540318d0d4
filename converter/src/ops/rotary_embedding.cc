// RotaryEmbedding (opset 23) as the graph of its definition: its row is the Binary family's
// (binary.cc), whose Mul, Sub and Add steps do the rotation (fuse_pointwise chains them); the
// rest are views, Slice, Gather and Concat steps, all of which run on the CPU and GPU backends,
// so no kernel of its own is needed.
#include <string>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"

namespace jetplan::converter::ops {

// X [B, H, S, D] or [B, S, H * D] (num_heads H), cos_cache and sin_cache [B, S, R/2] or, with
// position_ids [B, S], [max position, R/2] rows gathered by them. The first R =
// rotary_embedding_dim (0: D) elements of each head rotate: halves (x1, x2) = (x[:R/2],
// x[R/2:R]), or the even and odd elements when interleaved, become (cos x1 - sin x2, sin x1 +
// cos x2); the rest pass.
std::string decompose_rotary_embedding(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0, 1, 2}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  const auto bad = [&](const std::string& what) {
    fail("node ", node_label(node), ": ", what, " (input ", shape_str(x), ")");
  };
  if (x.size() != 3 && x.size() != 4) bad("the input must have rank 3 or 4");
  const bool positions = has_input(node, 3);
  if (positions) {
    const DataType p = input(g, node, 3).dtype;
    if (p != DataType::kInt64 && p != DataType::kInt32)
      bad(cat("position_ids is ", dtype_name(p), ", not an integer"));
  }
  // The heads as [B, S, H, D] (3-D) or the input's [B, H, S, D].
  Shape heads = x;
  if (x.size() == 3) {
    const int64_t h = attr_int(node, "num_heads", 0);
    if (h <= 0 || x[2] % h != 0) bad("3-D inputs need num_heads dividing the hidden size");
    heads = {x[0], x[1], h, x[2] / h};
  }
  const int64_t d = heads[3];
  const int64_t rd = attr_int(node, "rotary_embedding_dim", 0) == 0
                         ? d
                         : attr_int(node, "rotary_embedding_dim", 0);
  if (rd <= 0 || rd > d || rd % 2 != 0)
    bad(cat("rotary_embedding_dim ", rd, " must be even and at most the head size ", d));
  const int64_t half = rd / 2;
  for (size_t i : {1, 2}) {
    const Shape& c = input(g, node, i).shape;
    if (c.empty() || c.back() != half)
      bad(cat("cos_cache and sin_cache must end in rotary_embedding_dim / 2 = ", half, " (",
              shape_str(c), ")"));
  }
  const bool interleaved = attr_int(node, "interleaved", 0) != 0;

  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  int xh = node.inputs[0];
  if (x.size() == 3) xh = b.add("Reshape", "heads", {xh, b.ints("heads_shape", heads)});
  // cos and sin [B, S, R/2] with a unit heads dim where the heads are: [B, S, 1, R/2] for the
  // 3-D form, [B, 1, S, R/2] for the 4-D.
  int trig[2] = {node.inputs[1], node.inputs[2]};
  const int heads_axis = x.size() == 3 ? 2 : 1;
  for (int k = 0; k < 2; ++k) {
    const std::string n = k == 0 ? "cos" : "sin";
    if (positions)
      trig[k] = b.add("Gather", n + "_rows", {trig[k], node.inputs[3]}, {{"axis", A::int_attr(0)}});
    trig[k] = b.add("Unsqueeze", n + "_heads", {trig[k], b.ints(n + "_heads_axis", {heads_axis})});
  }
  const auto slice = [&](const std::string& what, int from, int64_t start, int64_t end,
                         int64_t step) {
    return b.add("Slice", what,
                 {from, b.ints(what + "_starts", {start}), b.ints(what + "_ends", {end}),
                  b.ints(what + "_axes", {3}), b.ints(what + "_steps", {step})});
  };
  const int rotated = rd == d ? xh : slice("rotated", xh, 0, rd, 1);
  const int x1 = interleaved ? slice("x1", rotated, 0, rd, 2) : slice("x1", rotated, 0, half, 1);
  const int x2 = interleaved ? slice("x2", rotated, 1, rd, 2) : slice("x2", rotated, half, rd, 1);
  const int cos = trig[0], sin = trig[1];
  const int real = b.add("Sub", "real", {b.add("Mul", "cos_x1", {cos, x1}),
                                         b.add("Mul", "sin_x2", {sin, x2})});
  const int imag = b.add("Add", "imag", {b.add("Mul", "sin_x1", {sin, x1}),
                                         b.add("Mul", "cos_x2", {cos, x2})});
  int y = 0;
  if (interleaved) {
    // (real, imag) pairs back in place: [.., R/2, 2] viewed as [.., R].
    const int axis4 = b.ints("pair_axis", {4});
    const int pairs = b.add("Concat", "pairs",
                            {b.add("Unsqueeze", "real_pair", {real, axis4}),
                             b.add("Unsqueeze", "imag_pair", {imag, axis4})},
                            {{"axis", A::int_attr(4)}});
    Shape flat = heads;
    flat[3] = rd;
    y = b.add("Reshape", "rotated_pairs", {pairs, b.ints("rotated_pairs_shape", flat)});
  } else {
    y = b.add("Concat", "rotated_halves", {real, imag}, {{"axis", A::int_attr(3)}});
  }
  const bool passes = rd < d;
  const bool view = x.size() == 3;  // the 3-D form's heads go back to [B, S, H * D]
  const int to = view ? -1 : node.outputs[0];
  if (passes)
    y = b.add("Concat", "with_pass", {y, slice("pass", xh, rd, d, 1)}, {{"axis", A::int_attr(3)}},
              to);
  else if (!view)
    y = b.add("Identity", "output", {y}, {}, to);
  if (view) b.add("Reshape", "output", {y, b.ints("output_shape", x)}, {}, node.outputs[0]);
  return "";
}

}  // namespace jetplan::converter::ops
