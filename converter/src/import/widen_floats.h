// Models stored in float16 or bfloat16 (a network exported after .half(), a mixed-precision
// export, a language model saved in bfloat16) are read as the float32 graph they round. Every op
// family then takes them as it takes a float32 model: on the CPU backend in float32, in a GPU
// plan in float16 (gpu_precision), fused and INT8 alike; and libonnx 1.12's checker and shape
// inference, whose schemas leave float16 and bfloat16 out of many ops (Celu, Einsum, OneHot,
// QLinearMatMul's scales, ...), see types they know. The plan's bindings keep the model's types.
//
// What changes against running every op in the narrow type: results are rounded once, at the
// outputs and where the model casts to a narrow type, instead of after every op; a float16
// intermediate that would overflow to infinity stays finite. A Cast (or a CastLike of a narrow
// initializer, graph input or Constant) to float16 or bfloat16 inside the graph still rounds.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

// What widen_floats() found narrow, by value name, with its type.
struct NarrowValues {
  std::map<std::string, DataType> bindings;  // the main graph's inputs and outputs
  std::map<std::string, DataType> casts;     // outputs of its Casts (CastLikes) to a narrow type
};

// Rewrites the model's float16 and bfloat16 to float32, in the graph and its subgraphs: tensor
// data (initializers, tensor attributes), the declared types of inputs, outputs and value_info,
// Cast's `to`, DequantizeLinear's `output_dtype` and the `dtype` attributes (EyeLike, the random
// generators). Returns what narrow_values() puts back.
NarrowValues widen_floats(onnx::ModelProto* model);

// After build_graph, on the widened graph:
// - a narrow graph input stays the plan's input binding of its type, and its readers take a Cast
//   of it to float32 (a node at the front);
// - a narrow graph output is written by a Cast (right after its producer) from a float32 value
//   that takes its place, which its readers read but Casts (a constant output stays a constant
//   of its type); an output that is a graph input passes through as it is;
// - a Cast to a narrow type writes that type again, and a Cast back to float32 after it feeds
//   its readers but Casts (which read the narrow value as it is).
void narrow_values(Graph& g, const NarrowValues& narrow);

}  // namespace jetplan::converter
