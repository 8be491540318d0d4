// --freeze NAME=VALUE: graph inputs pinned to constants before anything reads the model's
// shapes or folds it, so that control flow on them (an If on a sample rate) folds away.
#pragma once

#include <onnx/onnx_pb.h>

#include <map>
#include <set>
#include <string>

namespace jetplan::converter {

// Replaces each graph input named in `freeze` (name -> value text) by an initializer of that
// name holding the value; the input leaves the graph's input list, so the plan does not have it.
// The text is a literal of the input's declared element type (a scalar, `16000`, `0.5`, `true`,
// or a bracketed list for a 1-D tensor, `[1,2,3]`) or the path of a .npy file of exactly that
// type, whose shape must agree with every fixed dim the input declares. A scalar literal fills
// a declared shape of one element ([], [1], [1,1] or symbolic dims); a list, a rank-1 shape.
// OptionError naming the input for a name that is no graph input (or names an initializer), a
// malformed literal, a value out of the type's range, a type that a literal or .npy cannot give
// (string, complex), an unreadable .npy or one whose dtype or shape does not match.
void freeze_inputs(onnx::GraphProto* graph, const std::set<std::string>& initializers,
                   const std::map<std::string, std::string>& freeze);

}  // namespace jetplan::converter
