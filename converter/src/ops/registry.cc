// The table of op families (see registry.h) and what reads it: find_check, describe_op (for
// --list-ops), serialize_step, expand_node.
#include "converter/src/ops/registry.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <sstream>
#include <vector>

#include "converter/src/convert.h"
#include "converter/src/fold/control_flow.h"
#include "converter/src/import/onnx_definitions.h"
#include "converter/src/ir/error.h"
#include "converter/src/lower/lower.h"
#include "converter/src/ops/left_out.h"
#include "converter/src/passes/passes.h"
#include "kernels/cuda/select.h"

namespace jetplan::converter {
namespace ops {
namespace {

struct FamilyEntry {
  fb::OpFamily family;
  fb::StepParams params;  // the table its steps carry
  const FamilyRules* rules;
};

constexpr FamilyEntry kFamilies[] = {
#define JP_OP_FAMILY(Name, file, Params, Backends) \
  {fb::OpFamily::Name, fb::StepParams::Params, &file##_rules},
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};
static_assert(std::size(kFamilies) == static_cast<size_t>(fb::OpFamily::MAX) + 1,
              "kernels/op_families.def must list every fb::OpFamily");

constexpr bool in_enum_order() {
  for (size_t i = 0; i < std::size(kFamilies); ++i)
    if (kFamilies[i].family != static_cast<fb::OpFamily>(i)) return false;
  return true;
}
static_assert(in_enum_order(), "kernels/op_families.def must list the families in enum order");

const FamilyEntry& entry(fb::OpFamily family) {
  const auto i = static_cast<size_t>(family);
  if (i >= std::size(kFamilies))
    fail("internal error: op family ", static_cast<int>(i), " is not in the schema");
  return kFamilies[i];
}

struct RowRef {
  const OpRow* row;
  fb::OpFamily family;
};

// Every family's rows, sorted by op type; built on first use. An op type in two families is an
// error of the tables.
const std::vector<RowRef>& rows_by_op_type() {
  static const std::vector<RowRef> rows = [] {
    std::vector<RowRef> out;
    for (const FamilyEntry& e : kFamilies)
      for (size_t i = 0; i < e.rules->rows.count; ++i)
        out.push_back({e.rules->rows.begin + i, e.family});
    const auto less = [](const RowRef& a, const RowRef& b) {
      return std::string(a.row->op_type) < b.row->op_type;
    };
    std::sort(out.begin(), out.end(), less);
    for (size_t i = 1; i < out.size(); ++i)
      if (!less(out[i - 1], out[i]))
        fail("internal error: op ", out[i].row->op_type, " has rows in two families");
    return out;
  }();
  return rows;
}

}  // namespace

const FamilyRules& family_rules(fb::OpFamily family) { return *entry(family).rules; }

const OpRow* find_op_row(const std::string& op_type, fb::OpFamily* family) {
  const std::vector<RowRef>& rows = rows_by_op_type();
  auto it =
      std::lower_bound(rows.begin(), rows.end(), op_type,
                       [](const RowRef& r, const std::string& op) { return op > r.row->op_type; });
  if (it == rows.end() || op_type != it->row->op_type) return nullptr;
  if (family != nullptr) *family = it->family;
  return it->row;
}

StepParamsOffset serialize_step(flatbuffers::FlatBufferBuilder& fbb, const DraftStep& step) {
  const FamilyEntry& e = entry(step.op.family);
  const StepParamsOffset out = e.rules->serialize(fbb, step);
  if (out.first != e.params)
    fail("internal error: step '", step.name, "' of family ", fb::EnumNameOpFamily(e.family),
         " wrote ", fb::EnumNameStepParams(out.first), " (its family carries ",
         fb::EnumNameStepParams(e.params), ")");
  return out;
}

bool expand_node(Graph& g, Node& node, std::vector<Node>* out) {
  const ExpandFn expand = family_rules(node.op.family).expand;
  return expand != nullptr && expand(g, node, out);
}

}  // namespace ops

CheckFn find_check(const std::string& op_type) {
  const ops::OpRow* row = ops::find_op_row(op_type);
  return row != nullptr ? row->check : nullptr;
}

namespace {

// The dtypes an op row's text names for both backends (OpRow::dtypes: "float32, float16 (in float32)",
// "int8, uint8 -> int32; float32", "any plan dtype but bfloat16 -> bool"), in order, once each:
// per ';' group, the plan dtypes named outside parentheses (which say how a dtype is computed)
// and before a "->" (the output dtypes); "any plan dtype" names all of them but those after a
// "but". A dtype followed by a parenthesis that says "CPU" ("float64 (CPU backend only)") is
// left out: the row runs it on the CPU backend only.
std::vector<DataType> row_dtypes(const std::string& text) {
  std::vector<DataType> all, out;
  for (int32_t d = 1; d <= static_cast<int32_t>(DataType::kBFloat16); ++d)
    if (is_plan_dtype(static_cast<DataType>(d))) all.push_back(static_cast<DataType>(d));
  auto add = [&](DataType d) {
    if (std::find(out.begin(), out.end(), d) == out.end()) out.push_back(d);
  };
  std::stringstream groups(text);
  for (std::string group; std::getline(groups, group, ';');) {
    std::vector<std::string> words;  // outside parentheses, before "->"
    int depth = 0;
    std::string word, note;  // note: the text of the parenthesis being read
    for (char c : group.substr(0, group.find("->")) + " ") {
      if (depth > 0 && c != ')') note += c;
      if (std::isalnum(static_cast<unsigned char>(c)) && depth == 0) {
        word += c;
        continue;
      }
      if (!word.empty()) words.push_back(word);
      word.clear();
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      // "float64 (CPU backend only)": the row itself keeps the dtype before it off the GPU.
      if (c == ')' && depth == 0) {
        if (note.find("CPU") != std::string::npos && !words.empty()) words.back() = "(cpu)";
        note.clear();
      }
    }
    const auto named = [&](DataType d) {
      return std::find(words.begin(), words.end(), dtype_name(d)) != words.end();
    };
    if (group.find(ops::kAnyPlanDtype) != std::string::npos) {
      const bool but = std::find(words.begin(), words.end(), "but") != words.end();
      for (DataType d : all)
        if (!but || !named(d)) add(d);
      continue;
    }
    for (const std::string& w : words)
      for (DataType d : all)
        if (w == dtype_name(d)) add(d);
  }
  return out;
}

// The dtypes of `dtypes` (row_dtypes) a GPU plan runs a step of `family` with: a float32 tensor
// becomes float16 there (gpu_precision) unless the family reads it as Float32 only (its kernels
// take no Float16: NonMaxSuppression's boxes), and the family must have a CUDA kernel variant
// reading the dtype (kernels::cuda::has_kernel_for, what kernel selection picks from).
std::string gpu_dtypes(fb::OpFamily family, const std::vector<DataType>& dtypes) {
  const auto has_kernel = [family](DataType d) {
    fb::DType plan_dtype;
    return to_plan_dtype(d, &plan_dtype) &&
           kernels::cuda::has_kernel_for(static_cast<uint16_t>(family),
                                         static_cast<kernels::DType>(plan_dtype));
  };
  std::string out;
  for (DataType d : dtypes) {
    const bool as_half = d == DataType::kFloat32 && has_kernel(DataType::kFloat16);
    if (!as_half && !has_kernel(d)) continue;
    out += cat(out.empty() ? "" : ", ", dtype_name(d), as_half ? " (as float16)" : "");
  }
  return out;
}

}  // namespace

OpSupport describe_op(const std::string& op_type) {
  OpSupport out;
  out.folds = can_fold_op(op_type);
  fb::OpFamily family = fb::OpFamily::Copy;
  if (const ops::OpRow* row = ops::find_op_row(op_type, &family)) {
    out.runs = true;
    out.family = fb::EnumNameOpFamily(family);
    out.dtypes = row->dtypes;
    out.notes = row->notes;
    out.gpu_dtypes = gpu_dtypes(family, row_dtypes(row->dtypes));
  }
  if (const char* notes = control_flow_notes(op_type)) {
    out.folds = true;
    out.notes = notes;
  }
  if (!out.runs && !out.folds) {
    if (const char* why = ops::left_out_reason(op_type.c_str())) out.notes = why;
  }
  for (int opset = kLibOnnxOpset + 1; opset <= kNewestOnnxOpset && out.refused_from == 0; ++opset)
    if (unread_definition(op_type, opset) != 0) out.refused_from = opset;
  return out;
}

}  // namespace jetplan::converter
