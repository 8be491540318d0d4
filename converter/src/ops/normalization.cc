// What the normalization families' checks share (see normalization.h).
#include "converter/src/ops/normalization.h"

#include "converter/src/ir/error.h"
#include "converter/src/ops/op_helpers.h"

namespace jetplan::converter::ops {

std::string check_stash_type(const Node& node) {
  const int64_t stash = attr_int(node, "stash_type", 1);
  if (stash != 1)
    return cat("stash_type=", stash, " (jetplan computes the statistics in float32 or wider)");
  return "";
}

void require_channels(const Node& node, const Shape& x) {
  if (x.size() < 2)
    fail("node ", node_label(node), ": input ", shape_str(x), " has no channel dim");
}

void expect_shape(const Graph& g, const Node& node, size_t i, const char* what,
                  const Shape& shape) {
  const Shape& s = input(g, node, i).shape;
  if (s != shape)
    fail("node ", node_label(node), ": shape mismatch: ", what, " '", input(g, node, i).name,
         "' is ", shape_str(s), ", expected ", shape_str(shape));
}

}  // namespace jetplan::converter::ops
