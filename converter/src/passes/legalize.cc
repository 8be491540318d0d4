// Makes every node's shapes exactly those of its plan step, so that lower() maps node to step
// one to one: each resolved node goes through its family's expansion (ops/registry.h, ExpandFn),
// which replaces a node that needs several steps or views by them (MatMul vectors and batch
// broadcast, opset < 13 softmax, Split, DepthToSpace, Einsum, promoted dtypes, ...).
#include <utility>
#include <vector>

#include "converter/src/ops/registry.h"
#include "converter/src/passes/passes.h"

namespace jetplan::converter {

void legalize(Graph& g) {
  std::vector<Node> out;
  for (Node& node : g.nodes) {
    if (node.dead) continue;
    if (!ops::expand_node(g, node, &out)) out.push_back(std::move(node));
  }
  g.nodes = std::move(out);
  g.compact();
}

}  // namespace jetplan::converter
