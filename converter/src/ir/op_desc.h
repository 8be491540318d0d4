// The plan operation a node resolves to (OpDesc): the family, and the attributes of that family's
// step, set by the family's check (converter/src/ops/<family>.cc) and written by its serializer.
// Plain data. Fields shared by several families come first; the rest are named by the family
// that owns them (one small struct each where there are several).
#pragma once

#include <cstdint>
#include <vector>

#include "jetplan/plan_generated.h"

namespace jetplan::converter {

struct ActivationDesc {
  fb::ActivationKind kind = fb::ActivationKind::None;
  float alpha = 0.f;
  float beta = 0.f;
};

// Nodes that need more than one step are resolved with `expand` set; their family's expansion
// (at legalize) replaces them by their steps. kPromote keeps the family of its compute step
// (Unary, Elementwise or Binary, whose fused activation it keeps; Activation and Pool of 8-bit
// integers); the others carry the family of their main step, never Binary, Gemm or Activation,
// so that no fusion touches them.
enum class Expansion : uint8_t {
  kNone = 0,    // one step of OpDesc::family, as resolved
  kPromote,     // computed in `compute_dtype`, with Cast steps around
  kSplit,       // Split: one Slice per output (`slice.split` holds the extents along `axis`)
  kSpaceDepth,  // DepthToSpace/SpaceToDepth: Copy to the 6-D `space_depth_view`, Transpose
                // `perm`, Copy
  kVariadic,    // Sum/Mean/Max/Min: a chain of two-input steps over the inputs (Mean: / N)
  kEinsum,      // Einsum: Transpose + Gemm + Transpose (views between), or with einsum.reduce
                // Transposes + a broadcast Mul + a Reduce Sum (views between)
};

// ConvTranspose and the window families keep their window in OpDesc (kernel ... pad_end).

// Resize and Upsample: per dim of the input (see ResizeParams, kernels/kernels.h).
struct ResizeDesc {
  fb::ResizeMode mode = fb::ResizeMode::Nearest;
  fb::ResizeCoord coord = fb::ResizeCoord::HalfPixel;
  fb::ResizeNearest nearest = fb::ResizeNearest::RoundPreferFloor;
  std::vector<double> scale, resized_length, roi_start, roi_end;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation_value = 0.f;
  // Writing its part of a Concat along dim y_axis in place (concat_in_place): from y_axis_offset
  // of that dim (schemas/plan.fbs). -1: y is the result.
  int32_t y_axis = -1;
  int64_t y_axis_offset = 0;
};

// Reduce: the op and the reduced axes (non-negative, ascending). Reduce and ArgReduce with
// keepdims=0: the step writes output 0 in step_shape (the reduced dims kept, of extent 1) and
// the family's expansion adds a Copy view into the ONNX output.
struct ReduceDesc {
  fb::ReduceOp op = fb::ReduceOp::Sum;
  std::vector<int32_t> axes;
  bool keepdims_view = false;
  std::vector<int64_t> step_shape;
};

struct LrnDesc {
  int64_t size = 1;
  float alpha = 1e-4f, beta = 0.75f, bias = 1.f;
};

// NonMaxSuppression.
struct NmsDesc {
  int64_t max_output_per_class = 0;
  float iou_threshold = 0.f, score_threshold = 0.f;
  bool has_score_threshold = false, center_point_box = false;
};

// Rnn (ONNX RNN, LSTM, GRU). The has_* flags say which optional inputs and outputs the step has
// (omitted ones are absent from its lists).
struct RnnDesc {
  fb::RnnCell cell = fb::RnnCell::Lstm;
  fb::RnnDirection direction = fb::RnnDirection::Forward;
  bool batch_major = false;  // ONNX layout = 1
  int64_t hidden_size = 0;
  std::vector<fb::RnnActivation> activations;  // per direction, the cell's functions
  bool has_clip = false;
  float clip = 0.f;
  bool input_forget = false;
  bool linear_before_reset = false;
  bool has_bias = false;
  bool has_sequence_lens = false;
  bool has_initial_h = false;
  bool has_initial_c = false;
  bool has_peepholes = false;
  bool has_y = false;
  bool has_y_h = false;
  bool has_y_c = false;
};

// The quantized families: Quantize, Dequantize, QLinearMatMul, QLinearConv (whose window lives
// in OpDesc's window fields), DynamicQuantize, and the integer products MatMulInteger and
// ConvInteger.
struct QuantDesc {
  // Quantize, Dequantize: axis of x (non-negative) when per_axis.
  int32_t axis = 1;
  bool per_axis = false;
  bool has_zero_point = false;
  // Quantize: the image form an INT8 plan's stem reads (x NHWC or NCHW, y NHWC with its channels
  // padded; plan.fbs QuantizeLayout), else Same.
  fb::QuantizeLayout layout = fb::QuantizeLayout::Same;
  // QLinearMatMul with a 1-D operand: its expansion views it as a matrix ([1, K] / [K, 1]) and
  // the step's [.., M, N] output as ONNX's.
  bool a_vector = false;
  bool b_vector = false;
  bool has_bias = false;  // QLinearConv: the int32 bias
  // MatMulInteger and ConvInteger resolve to a placeholder (family Dequantize) that the
  // Dequantize expansion replaces by Dequantize (or folded constants), a float32 Gemm or Conv,
  // and a Cast to int32.
  enum class Integer : uint8_t { kNone, kMatMul, kConv };
  Integer integer = Integer::kNone;
};

// Slice: resolved starts (in range) and non-zero steps, one per input dim; Split (kSplit): the
// extent of each output along OpDesc::axis.
struct SliceDesc {
  std::vector<int64_t> starts, steps;
  std::vector<int64_t> split;
};

// Pad: begin pads per dim (end pads are implied by the output shape), constant value.
struct PadDesc {
  fb::PadMode mode = fb::PadMode::Constant;
  std::vector<int64_t> begin;
  double value = 0.0;
};

// Einsum (kEinsum): the letters of operand A, operand B and the output ("bhid", "bhjd",
// "bhij"); b empty: one operand. An operand's term as the equation gives it when an index
// repeats in it (a diagonal, taken first; a/b are then the terms of the diagonal); empty
// otherwise.
struct EinsumDesc {
  std::vector<char> a, b, out;
  std::vector<char> a_in, b_in;
  bool reduce = false;
};

// Attention (fuse_attention, passes/): the scale of Q Kt, the masks, and for Q, K, V and O the
// tensor dim holding each of (batch, heads, seq, head dim) (rank 3: batch, seq, head dim);
// empty: the tensor's own order.
// An Attention operand read out of a larger tensor (schemas/plan.fbs AttentionView): element
// (b, h, s, d) at offset + b * batch + h * head + s * seq + d; absent where seq_len is 0.
struct AttentionViewDesc {
  int64_t offset = 0, batch = 0, head = 0, seq = 0, seq_len = 0;
};

struct AttentionDesc {
  float scale = 1.f;
  bool causal = false;
  bool has_mask = false;
  std::vector<uint8_t> q_axes, k_axes, v_axes, o_axes;
  AttentionViewDesc q_view, k_view, v_view;
};

// GridSample: ONNX's mode, padding_mode and align_corners.
struct GridSampleDesc {
  fb::GridSampleMode mode = fb::GridSampleMode::Linear;
  fb::GridSamplePadding padding = fb::GridSamplePadding::Zeros;
  bool align_corners = false;
};

// RoiAlign and MaxRoiPool: the mode, RoiAlign's coordinate transformation and sampling ratio,
// the scale of the boxes' coordinates.
struct RoiPoolDesc {
  fb::RoiPoolMode mode = fb::RoiPoolMode::AlignAvg;
  bool half_pixel = false;
  int64_t sampling_ratio = 0;
  float spatial_scale = 1.f;
};

// The plan operation a node resolves to. Only the fields of `family` are meaningful.
struct OpDesc {
  bool resolved = false;
  fb::OpFamily family = fb::OpFamily::Copy;
  ActivationDesc act;  // Activation: the function; Conv, Gemm, Binary, norms: the fused epilogue
  // Conv, ConvTranspose, QLinearConv and Pool, one entry per spatial dim, explicit pads (auto_pad
  // resolved). ConvTranspose's pad_begin may be negative where output_shape or auto_pad asks for
  // more output than the full transposed convolution gives (the ONNX reference's floor division).
  std::vector<int64_t> kernel, stride, dilation, pad_begin, pad_end;
  std::vector<int64_t> output_padding;  // ConvTranspose
  int64_t groups = 1;                   // Conv, ConvTranspose, QLinearConv, GroupNorm
  bool has_residual = false;  // Conv, Gemm: inputs[3] is added before the activation
  bool residual_after_act = false;  // Conv: ... or after it (fuse.cc: x + SiLU(conv(x)))
  bool has_bias = false;      // ConvTranspose, LayerNorm: the optional bias input is there
  // Conv or ConvTranspose writing a Concat along NHWC channels in place: its channels' first
  // index in the Concat's output (concat_in_place, gpu_lower.h).
  int64_t y_channel_offset = 0;
  // Transpose writing its part of a Concat in place (concat_in_place): its dense result in
  // blocks of y_block elements, y_block_stride apart from y_offset (schemas/plan.fbs).
  int64_t y_block = 0, y_block_stride = 0, y_offset = 0;
  // Conv INT8 steps (schemas/plan.fbs ConvParams): the scales of an Int8 residual and y.
  float residual_scale = 0.f, y_scale = 0.f;
  fb::PoolKind pool_kind = fb::PoolKind::Max;
  bool count_include_pad = false;
  bool ceil_mode = false;  // Pool: output extents round up (schema PoolParams.ceil_mode)
  bool pool_indices_column_major = false;  // MaxPool Indices with storage_order 1
  // Gemm (ONNX Gemm and MatMul).
  bool trans_a = false, trans_b = false;
  float alpha = 1.f, beta = 1.f;
  bool a_vector = false, b_vector = false;  // MatMul 1-D operands: viewed as [1,K] and [K,1]
  fb::BinaryOp binary = fb::BinaryOp::Add;
  fb::UnaryOp unary = fb::UnaryOp::Abs;
  fb::ElementwiseOp elementwise = fb::ElementwiseOp::Add;
  // The axis (non-negative) of Softmax (of the step's input), Concat, ArgReduce, TopK,
  // LayerNorm, Gather, GatherElements, ScatterElements and Split.
  int32_t axis = 0;
  bool log = false;  // Softmax: LogSoftmax
  bool masked_rows_zero = false;  // Softmax: a row of -inf gives 0 (kSoftmaxMaskedRowsZero)
  bool exclusive = false, reverse = false;  // CumSum, CumProd
  // MaxUnpool: the shape its indices address (the op's default output shape) where the output
  // is larger (output_shape); empty: the output's own.
  std::vector<int64_t> index_shape;
  // DeformConv: its offset groups and optional inputs (kernel, stride, dilation and pads above).
  int64_t offset_groups = 1;
  bool has_mask = false;
  bool product = false;                     // CumProd
  // Scatter: ScatterND (else ScatterElements, along `axis`), and how updates meet the data.
  bool scatter_nd = false;
  fb::ScatterReduction scatter_reduction = fb::ScatterReduction::None;
  bool scatter_sorted = false;  // ScatterND of constant tuples naming increasing offsets
  // Softmax: non-empty when it runs on x viewed as this 2-D shape (opset < 13).
  std::vector<int64_t> softmax_view;
  float epsilon = 1e-5f;
  bool removable = false;  // Identity/Dropout: consumers may read the input directly
  // Scratch the step needs in the arena for itself alone (TopK, NMS, RNN), in bytes.
  uint64_t workspace_bytes = 0;
  // The step writes one more output, an int64 [1] holding output 0's run-time leading extent
  // (NonMaxSuppression); output 0 must then be a graph output.
  bool count_output = false;
  // Pointwise: the program (fuse_pointwise.cc); instruction i writes register i.
  std::vector<fb::PointwiseInstr> pointwise;

  // Steps of more than one node (see Expansion). kPromote and kVariadic: the dtype the
  // arithmetic runs in (an ONNX DataType number, see graph.h), when the kernels lack the
  // tensors' own.
  Expansion expand = Expansion::kNone;
  int32_t compute_dtype = 0;

  std::vector<int32_t> perm;  // Transpose; kSpaceDepth's transpose of the 6-D view
  std::vector<int64_t> space_depth_view;  // kSpaceDepth: the 6-D shape the input is viewed as
  SliceDesc slice;
  PadDesc pad;
  bool tile = false;  // Broadcast: Tile (true) or Expand
  EinsumDesc einsum;
  ResizeDesc resize;
  ReduceDesc reduce;
  fb::ArgKind arg_kind = fb::ArgKind::Max;  // ArgReduce
  bool select_last_index = false;           // ArgReduce
  bool largest = true;                      // TopK
  bool has_mean = false, has_inv_std_dev = false;  // LayerNorm: the optional outputs written
  bool affine_per_group = false;  // GroupNorm: scale and bias per group (opset 18)
  LrnDesc lrn;
  NmsDesc nms;
  RnnDesc rnn;
  QuantDesc quant;
  AttentionDesc attention;
  bool rms = false;  // LayerNorm: by the root mean square (RMSNormalization)
  GridSampleDesc grid_sample;
  RoiPoolDesc roi_pool;
};

}  // namespace jetplan::converter
