// The table of ONNX op definitions newer than opset 17 (see onnx_definitions.h) and the checks that
// read it.
#include "converter/src/import/onnx_definitions.h"

#include <algorithm>
#include <cctype>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "converter/src/ir/error.h"

namespace jetplan::converter {
namespace {

// Written by converter/tools/gen_onnx_definitions.py from the PyPI onnx package's schemas
// (onnx.defs.get_all_schemas_with_history); sorted by op and version. A variadic input or output
// count is capped at INT32_MAX.
constexpr OnnxDefinition kDefinitions[] = {
    {"AffineGrid", 20, true, "align_corners:int", 2, 2, 1, 1},
    {"Attention", 23, true,
     "is_causal:int kv_num_heads:int q_num_heads:int qk_matmul_output_mode:int scale:float "
     "softcap:float softmax_precision:int",
     3, 6, 1, 4},
    {"Attention", 24, false,
     "is_causal:int kv_num_heads:int q_num_heads:int qk_matmul_output_mode:int scale:float "
     "softcap:float softmax_precision:int",
     3, 7, 1, 4},
    {"Attention", 25, false,
     "is_causal:int kv_num_heads:int left_window_size:int q_num_heads:int "
     "qk_matmul_output_mode:int right_window_size:int scale:float softcap:float "
     "softmax_precision:int",
     3, 7, 1, 4},
    {"AveragePool", 19, false,
     "auto_pad:string ceil_mode:int count_include_pad:int dilations:ints kernel_shape:ints "
     "pads:ints strides:ints",
     1, 1, 1, 1},
    {"BitCast", 26, true, "to:int", 1, 1, 1, 1},
    {"BitShift", 28, false, "direction:string", 2, 2, 1, 1},
    {"BitwiseAnd", 18, true, "", 2, 2, 1, 1},
    {"BitwiseNot", 18, true, "", 1, 1, 1, 1},
    {"BitwiseOr", 18, true, "", 2, 2, 1, 1},
    {"BitwiseXor", 18, true, "", 2, 2, 1, 1},
    {"Cast", 19, false, "saturate:int to:int", 1, 1, 1, 1},
    {"Cast", 24, false, "round_mode:string saturate:int to:int", 1, 1, 1, 1},
    {"CastLike", 19, false, "saturate:int", 2, 2, 1, 1},
    {"CastLike", 24, false, "round_mode:string saturate:int", 2, 2, 1, 1},
    {"CausalConvWithState", 27, true, "activation:string", 2, 4, 2, 2},
    {"CenterCropPad", 18, true, "axes:ints", 2, 2, 1, 1},
    {"Col2Im", 18, true, "dilations:ints pads:ints strides:ints", 3, 3, 1, 1},
    {"CumProd", 26, true, "exclusive:int reverse:int", 2, 2, 1, 1},
    {"DFT", 20, false, "inverse:int onesided:int", 1, 3, 1, 1},
    {"DeformConv", 19, true,
     "dilations:ints group:int kernel_shape:ints offset_group:int pads:ints strides:ints", 3, 5, 1,
     1},
    {"DequantizeLinear", 21, false, "axis:int block_size:int", 2, 3, 1, 1},
    {"DequantizeLinear", 23, false, "axis:int block_size:int output_dtype:int", 2, 3, 1, 1},
    {"Gelu", 20, true, "approximate:string", 1, 1, 1, 1},
    {"GridSample", 20, false, "align_corners:int mode:string padding_mode:string", 2, 2, 1, 1},
    {"GroupNormalization", 18, true, "epsilon:float num_groups:int", 3, 3, 1, 1},
    {"GroupNormalization", 21, false, "epsilon:float num_groups:int stash_type:int", 3, 3, 1, 1},
    {"ImageDecoder", 20, true, "pixel_format:string", 1, 1, 1, 1},
    {"IsInf", 20, false, "detect_negative:int detect_positive:int", 1, 1, 1, 1},
    {"LinearAttention", 27, true,
     "chunk_size:int kv_num_heads:int q_num_heads:int scale:float update_rule:string", 3, 6, 2, 2},
    {"LpPool", 18, false,
     "auto_pad:string ceil_mode:int dilations:ints kernel_shape:ints p:int pads:ints strides:ints",
     1, 1, 1, 1},
    {"Mish", 18, true, "", 1, 1, 1, 1},
    {"Mod", 28, false, "fmod:int", 2, 2, 1, 1},
    {"OptionalGetElement", 18, false, "", 1, 1, 1, 1},
    {"OptionalHasElement", 18, false, "", 0, 1, 1, 1},
    {"Pad", 18, false, "mode:string", 2, 4, 1, 1},
    {"Pad", 19, false, "mode:string", 2, 4, 1, 1},
    {"QuantizeLinear", 19, false, "axis:int saturate:int", 2, 3, 1, 1},
    {"QuantizeLinear", 21, false, "axis:int block_size:int output_dtype:int saturate:int", 2, 3, 1,
     1},
    {"QuantizeLinear", 23, false,
     "axis:int block_size:int output_dtype:int precision:int saturate:int", 2, 3, 1, 1},
    {"RMSNormalization", 23, true, "axis:int epsilon:float stash_type:int", 2, 2, 1, 1},
    {"Range", 27, false, "stash_type:int", 3, 3, 1, 1},
    {"ReduceL1", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceL2", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceLogSum", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceLogSum", 28, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceLogSumExp", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceLogSumExp", 28, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceMax", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceMean", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceMin", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceProd", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"ReduceSumSquare", 18, false, "keepdims:int noop_with_empty_axes:int", 1, 2, 1, 1},
    {"RegexFullMatch", 20, true, "pattern:string", 1, 1, 1, 1},
    {"Resize", 18, false,
     "antialias:int axes:ints coordinate_transformation_mode:string cubic_coeff_a:float "
     "exclude_outside:int extrapolation_value:float keep_aspect_ratio_policy:string mode:string "
     "nearest_mode:string",
     1, 4, 1, 1},
    {"Resize", 19, false,
     "antialias:int axes:ints coordinate_transformation_mode:string cubic_coeff_a:float "
     "exclude_outside:int extrapolation_value:float keep_aspect_ratio_policy:string mode:string "
     "nearest_mode:string",
     1, 4, 1, 1},
    {"RotaryEmbedding", 23, true, "interleaved:int num_heads:int rotary_embedding_dim:int", 3, 4, 1,
     1},
    {"ScatterElements", 18, false, "axis:int reduction:string", 3, 3, 1, 1},
    {"ScatterND", 18, false, "reduction:string", 3, 3, 1, 1},
    {"SpaceToDepth", 28, false, "blocksize:int mode:string", 1, 1, 1, 1},
    {"Split", 18, false, "axis:int num_outputs:int", 1, 2, 1, 2147483647},
    {"StringConcat", 20, true, "", 2, 2, 1, 1},
    {"StringSplit", 20, true, "delimiter:string maxsplit:int", 1, 1, 2, 2},
    {"SwiGLU", 28, true, "alpha:float", 2, 2, 1, 1},
    {"Swish", 24, true, "alpha:float", 1, 1, 1, 1},
    {"TensorScatter", 24, true, "axis:int mode:string", 2, 3, 1, 1},
};

constexpr int compare(const char* a, const char* b) {
  for (; *a && *a == *b; ++a, ++b) {
  }
  return *a == *b ? 0 : (static_cast<unsigned char>(*a) < static_cast<unsigned char>(*b) ? -1 : 1);
}

constexpr bool sorted_table() {
  for (size_t i = 1; i < std::size(kDefinitions); ++i) {
    const int c = compare(kDefinitions[i - 1].op_type, kDefinitions[i].op_type);
    if (c > 0 || (c == 0 && kDefinitions[i - 1].since_version >= kDefinitions[i].since_version))
      return false;
  }
  return true;
}
static_assert(sorted_table(), "kDefinitions must be sorted by op and version");

// The definitions of `op_type`, oldest first.
std::pair<const OnnxDefinition*, const OnnxDefinition*> definitions_of(const std::string& op) {
  struct ByOp {
    bool operator()(const OnnxDefinition& d, const std::string& op) const { return d.op_type < op; }
    bool operator()(const std::string& op, const OnnxDefinition& d) const { return op < d.op_type; }
  };
  return std::equal_range(std::begin(kDefinitions), std::end(kDefinitions), op, ByOp());
}

// AttributeProto's name of an IR attribute's type, lower case.
std::string kind_name(const Attribute& a) {
  switch (a.kind) {
    case Attribute::Kind::kInt:
      return "int";
    case Attribute::Kind::kFloat:
      return "float";
    case Attribute::Kind::kString:
      return "string";
    case Attribute::Kind::kInts:
      return "ints";
    case Attribute::Kind::kFloats:
      return "floats";
    case Attribute::Kind::kStrings:
      return "strings";
    case Attribute::Kind::kTensor:
      return "tensor";
    case Attribute::Kind::kGraph:
      return "graph";
    case Attribute::Kind::kOther: {
      std::string s = a.onnx_type;
      for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return s;
    }
  }
  return "";
}

// name -> type of a definition's attributes.
std::map<std::string, std::string> attributes_of(const OnnxDefinition& def) {
  std::map<std::string, std::string> out;
  const std::string list = def.attributes;
  for (size_t at = 0; at < list.size();) {
    size_t end = list.find(' ', at);
    if (end == std::string::npos) end = list.size();
    const std::string item = list.substr(at, end - at);
    const size_t colon = item.find(':');
    out[item.substr(0, colon)] = item.substr(colon + 1);
    at = end + 1;
  }
  return out;
}

std::string count_reason(const char* what, size_t have, int min, int max) {
  if (static_cast<int64_t>(have) >= min && static_cast<int64_t>(have) <= max) return "";
  return cat(have, " ", what, " (it takes ",
             min == max ? std::to_string(min) : cat(min, " to ", max), ")");
}

// Why `node` does not match `def`, or "".
std::string mismatch(const Node& node, const OnnxDefinition& def, int opset) {
  const std::map<std::string, std::string> attrs = attributes_of(def);
  std::string names;
  for (const auto& [name, type] : attrs) names += (names.empty() ? "" : ", ") + name;
  for (const auto& [name, a] : node.attrs) {
    auto it = attrs.find(name);
    if (it == attrs.end())
      return cat("attribute '", name, "' is not an attribute of ", node.op_type, " at opset ",
                 opset, " (",
                 names.empty() ? std::string("it has none") : "its attributes: " + names, ")");
    if (kind_name(a) != it->second)
      return cat("attribute '", name, "' is of type ", kind_name(a), ", not ", it->second);
  }
  if (std::string r = count_reason("inputs", node.inputs.size(), def.min_inputs, def.max_inputs);
      !r.empty())
    return r;
  return count_reason("outputs", node.outputs.size(), def.min_outputs, def.max_outputs);
}

}  // namespace

const OnnxDefinition* newer_definition(const std::string& op_type, int opset) {
  const auto [begin, end] = definitions_of(op_type);
  const OnnxDefinition* found = nullptr;
  for (const OnnxDefinition* d = begin; d != end && d->since_version <= opset; ++d) found = d;
  return found;
}

int first_newer_opset(const std::string& op_type) {
  const auto [begin, end] = definitions_of(op_type);
  return begin == end || !begin->added ? 0 : begin->since_version;
}

std::vector<std::pair<std::string, int>> newer_ops() {
  std::map<std::string, int> last;
  for (const OnnxDefinition& d : kDefinitions) last[d.op_type] = d.since_version;
  std::vector<std::pair<std::string, int>> out;
  for (const auto& [op, version] : last) out.emplace_back(op, version);
  return out;
}

void check_newer_definitions(const Graph& g) {
  std::vector<std::string> bad;
  for (const Node& node : g.nodes) {
    if (!node.domain.empty()) continue;
    const OnnxDefinition* def = newer_definition(node.op_type, g.opset);
    if (def == nullptr) continue;
    if (std::string r = mismatch(node, *def, g.opset); !r.empty())
      bad.push_back(cat(node_label(node), ": ", r));
  }
  if (bad.empty()) return;
  std::string list;
  for (const std::string& b : bad) list += (list.empty() ? "" : "; ") + b;
  fail("invalid ONNX model: ", bad.size(), bad.size() == 1 ? " node does" : " nodes do",
       " not match the op's definition at opset ", g.opset, ": ", list);
}

}  // namespace jetplan::converter
