// Check functions of the tensor op families and their op table.
#include "converter/src/graph_edit.h"
#include "converter/src/support_groups.h"
#include "converter/src/support_ops.h"
#include "converter/src/table.h"

namespace jetplan::converter {
namespace {

struct OpCheck {
  const char* op_type;
  CheckFn check;
};

// Sorted by op type. The first entry only keeps the table non-empty until the group's ops land.
constexpr OpCheck kOps[] = {
    {"", nullptr},
};
static_assert(sorted_by_op_type(kOps), "kOps must be sorted by op type");

}  // namespace

CheckFn find_check_tensor(const std::string& op_type) {
  for (const OpCheck& e : kOps)
    if (e.check != nullptr && op_type == e.op_type) return e.check;
  return nullptr;
}

}  // namespace jetplan::converter

namespace jetplan::converter {

bool expand_tensor(Graph&, Node&, std::vector<Node>*) { return false; }

}  // namespace jetplan::converter
