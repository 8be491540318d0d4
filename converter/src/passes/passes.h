// Graph rewrites. Each keeps the nodes in a valid topological order and is deterministic.
#pragma once

#include "converter/src/ir/graph.h"

namespace jetplan::converter {

// Evaluates `node` now when every input is a constant (for Shape and Size: when the input's
// shape is known): its outputs become constants and the node dies. Returns false, changing
// nothing, when the node computes on run-time data or its op has no evaluator here.
// ConvertError naming the node when the evaluation finds the model inconsistent.
bool fold_node(Graph& g, Node& node);
// True when fold_node has an evaluator for the op (it may still decline a given node).
bool can_fold_op(const std::string& op_type);

// Identity and Dropout (resolved with op.removable): consumers read the input instead. Kept as
// a Copy only where the input and the output must stay distinct tensors (both graph values).
void remove_identities(Graph& g);

// Removes nodes none of whose outputs are read by a live node or are graph outputs.
void eliminate_dead_nodes(Graph& g);

// Conv followed by BatchNormalization (the Conv output read by nothing else, constant weights
// and BN parameters): scales the weights and bias, removes the BN node.
void fold_batchnorm(Graph& g);

// Rewrites exporters' spellings of one function into that function, before fuse(): x *
// Sigmoid(x) -> Silu; the erf form of GELU (x * 0.5 * (1 + Erf(x / sqrt(2))), in any order of
// the products) -> Gelu; its tanh form (x * 0.5 * (1 + Tanh(sqrt(2/pi) * (x + 0.044715 * x^3))),
// x^3 as Pow or two Muls, any order) -> GeluTanh; a Mul or Div by a scalar constant whose result reaches a Gemm operand
// through Transposes and Copies only -> the Gemm's alpha; two Transposes in a row -> one.
// Intermediates must have no other reader and be no graph outputs.
void fuse_patterns(Graph& g);

// After fuse_patterns(), before fuse(): MatMul(Q, Kt) [scalar scales] [masks: + mask, Where
// of a constant condition and a masked-out fill] -> Softmax(last axis) -> [NaN guard] ->
// MatMul(., V), every intermediate read once and no graph output, becomes one Attention node
// (a constant causal mask: its causal flag); the Transposes around Q, K, V and O become its axes (fuse_attention.cc). For GPU plans
// only heads of a dim the CUDA kernels have (kernels/attention.h) fuse; the others keep their
// steps. Then attention_row_order(): row Transposes next to the projections move into them.
void fuse_attention(Graph& g, bool gpu);

// For each Attention node: a Transpose (keeping the last dim) in front of the row-wise QKV
// projection whose output the node reads through views, and one after the output projection
// that reads its O, leave: the projection reads x and the node's views follow, the node writes
// O's rows in the Transpose's order (attention_rows.cc). nn.MultiheadAttention's batch_first.
void attention_row_order(Graph& g);

// Epilogue fusion into the producer when the intermediate has one reader and is no graph
// output: Conv + per-channel constant Add/Sub (into the bias) + Add of a tensor of the output's
// shape (residual) + activation; Gemm/MatMul + Add (C: a constant or broadcasting addend) +
// Add of a run-time tensor of the output's shape (residual, with or without C) + activation;
// Binary + activation. A fused node runs where its last absorbed node ran.
void fuse(Graph& g);

// Part of fuse(), after its absorptions: an activation of data that Concats, Transposes and
// Copies (reshapes) move, unchanged, from Convs and Gemms without an activation of their own
// (every value on the way read once and no graph output) moves into those producers' epilogues;
// the data movement then writes the activation's output (hoist_activation.cc). Elementwise
// functions commute with moving the elements: the same values.
void hoist_activations(Graph& g);

// After fuse(): maximal groups of float elementwise nodes (Binary, Activation, float Unary math)
// whose intermediates have one reader, the output's shape and are no graph outputs become one
// Pointwise node (a program over its external inputs, fuse_pointwise.cc). Lone nodes stay.
void fuse_pointwise(Graph& g);

// Gives every node exactly the shapes of its plan step: each live node goes through its
// family's expansion (ops/registry.h, ExpandFn), which adds Copy nodes (views), constants and
// steps where ONNX semantics are wider: MatMul with 1-D operands, with fewer batch dims than its
// output, or with batch dims broadcast partially (materialized by a Mul with ones); softmax of
// opset < 13 over several flattened dims (run on a 2-D view); the multi-step nodes (Split,
// DepthToSpace, Einsum, promoted dtypes, ...). After it, lower() maps each node to one step.
void legalize(Graph& g);

}  // namespace jetplan::converter
