// A spread of small models whose every op converts for GPU targets (test_gpu_plan_invariant.cc):
// the op families and forms GPU plans take, each model in the shape exporters write it.
#pragma once

#include <string>
#include <vector>

#include "tests/converter/util/onnx_builder.h"

namespace jetplan::converter::testing {

struct GpuPlanModel {
  std::string name;
  ModelBuilder builder;
  // test_gpu_plan_run.cc compares its GPU outputs with the CPU plan's; false where an output
  // may rightly differ (an argmax of values that FP16 rounding can tie or reorder; its kernel
  // is checked on equal inputs by tests/kernels/cuda/test_arg_reduce.cc).
  bool compare_on_gpu = true;
};

// x [1, 8, 8, 8] -> Conv 3x3 + BatchNorm + Relu -> depthwise Conv + residual Add -> MaxPool ->
// Concat with a 1x1 Conv of it -> LRN -> GlobalAveragePool -> Flatten -> Gemm -> Softmax.
inline ModelBuilder gpu_conv_net() {
  ModelBuilder m(13);
  m.input("x", {1, 8, 8, 8}).output("y");
  m.random("w1", {8, 8, 3, 3}).random("b1", {8});
  m.random("s", {8}, 0.5f, 1.5f).random("o", {8}).random("mu", {8}).random("v", {8}, 0.5f, 1.f);
  m.random("wd", {8, 1, 3, 3}).random("w2", {8, 8, 1, 1});
  m.random("gw", {4, 16}).random("gb", {4});
  const std::vector<int64_t> pad1{1, 1, 1, 1};
  attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", pad1);
  m.node("BatchNormalization", {"c1", "s", "o", "mu", "v"}, {"bn"}, "bn");
  m.node("Relu", {"bn"}, {"r1"}, "relu1");
  auto& dw = m.node("Conv", {"r1", "wd"}, {"c2"}, "depthwise");
  attr(dw, "pads", pad1);
  attr(dw, "group", int64_t{8});
  m.node("Add", {"c2", "r1"}, {"res"}, "residual");
  auto& pool = m.node("MaxPool", {"res"}, {"p"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  m.node("Conv", {"p", "w2"}, {"c3"}, "pointwise");
  attr(m.node("Concat", {"p", "c3"}, {"cat"}, "concat"), "axis", int64_t{1});
  attr(m.node("LRN", {"cat"}, {"lrn"}, "lrn"), "size", int64_t{5});
  m.node("GlobalAveragePool", {"lrn"}, {"g"}, "gap");
  m.node("Flatten", {"g"}, {"f"}, "flatten");
  attr(m.node("Gemm", {"f", "gw", "gb"}, {"logits"}, "fc"), "transB", int64_t{1});
  attr(m.node("Softmax", {"logits"}, {"y"}, "softmax"), "axis", int64_t{-1});
  return m;
}

// An encoder block as transformers exports it: x [1, 8, 32] -> LayerNorm -> MatMul + bias ->
// Gelu (Erf form) -> scores Softmax guarded by IsNaN/Where -> ReduceMean.
inline ModelBuilder gpu_encoder() {
  ModelBuilder m(17);
  m.input("x", {1, 8, 32}).output("y").output("p");
  m.random("gamma", {32}).random("beta", {32}).random("w", {32, 32}).random("b", {32});
  m.initializer("half", {}, {0.5f}).initializer("one", {}, {1.f});
  m.initializer("rsqrt2", {}, {0.70710678f}).initializer("zero", {}, {0.f});
  attr(m.node("LayerNormalization", {"x", "gamma", "beta"}, {"ln"}, "ln"), "axis", int64_t{-1});
  m.node("MatMul", {"ln", "w"}, {"mm"}, "matmul");
  m.node("Add", {"mm", "b"}, {"h"}, "bias");
  m.node("Mul", {"h", "rsqrt2"}, {"hs"}, "gelu_scale");
  m.node("Erf", {"hs"}, {"e"}, "gelu_erf");
  m.node("Add", {"e", "one"}, {"e1"}, "gelu_add");
  m.node("Mul", {"h", "e1"}, {"he"}, "gelu_mul");
  m.node("Mul", {"he", "half"}, {"g"}, "gelu_half");
  attr(m.node("Softmax", {"g"}, {"sm"}, "softmax"), "axis", int64_t{-1});
  m.node("IsNaN", {"sm"}, {"nan"}, "isnan");
  m.node("Where", {"nan", "zero", "sm"}, {"p"}, "where");
  auto& mean = m.node("ReduceMean", {"g"}, {"y"}, "mean");
  attr(mean, "axes", std::vector<int64_t>{1});
  attr(mean, "keepdims", int64_t{0});
  return m;
}

// Data movement and integer steps: x [1, 4, 6, 6] -> Resize (nearest, x2) -> Pad -> Slice ->
// Transpose -> Cast to float16 and back -> CumSum; a Gather of rows beside; an int32 input
// through integer Add, Cast to float and back to int64, and to int8 and int64.
inline ModelBuilder gpu_data_movement() {
  ModelBuilder m(13);
  m.input("x", {1, 4, 6, 6}).input("n", {4}, onnx::TensorProto::INT32);
  m.output("y").output("rows").output("nf").output("sum64", onnx::TensorProto::INT64);
  m.initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  m.initializer_i64("pads", {8}, {0, 0, 1, 1, 0, 0, 1, 1});
  m.initializer_i64("starts", {2}, {2, 3}).initializer_i64("ends", {2}, {12, 11});
  m.initializer_i64("axes", {2}, {2, 3}).initializer_i64("idx", {2}, {3, 0});
  m.initializer_i64("axis", {}, {3});
  m.node("Resize", {"x", "", "scales"}, {"up"}, "resize");
  m.node("Pad", {"up", "pads"}, {"pd"}, "pad");
  m.node("Slice", {"pd", "starts", "ends", "axes"}, {"sl"}, "slice");
  attr(m.node("Transpose", {"sl"}, {"tr"}, "transpose"), "perm", std::vector<int64_t>{0, 2, 3, 1});
  attr(m.node("Cast", {"tr"}, {"h"}, "to_half"), "to", int64_t{onnx::TensorProto::FLOAT16});
  attr(m.node("Cast", {"h"}, {"f"}, "to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("Add", {"n", "n"}, {"n2"}, "int_add");
  attr(m.node("Cast", {"n2"}, {"nf"}, "int_to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  attr(m.node("Cast", {"nf"}, {"n64"}, "float_to_int64"), "to", int64_t{onnx::TensorProto::INT64});
  attr(m.node("Cast", {"n"}, {"n8"}, "int32_to_int8"), "to", int64_t{onnx::TensorProto::INT8});
  attr(m.node("Cast", {"n8"}, {"n8_64"}, "int8_to_int64"), "to", int64_t{onnx::TensorProto::INT64});
  m.node("Add", {"n64", "n8_64"}, {"sum64"}, "int64_add");
  m.node("CumSum", {"f", "axis"}, {"y"}, "cumsum");
  attr(m.node("Gather", {"x", "idx"}, {"rows"}, "gather"), "axis", int64_t{2});
  return m;
}

// A speech encoder's front (1-D convs over [N, C, L]): x [2, 4, 50] -> Conv1d 16 k5 s2 + Relu
// -> grouped Conv1d + residual Add -> per-channel constant Add -> Sigmoid-gated Mul (Pointwise)
// -> InstanceNormalization -> depthwise Conv1d -> "y" [2, 16, 25]; and MaxPool1d then
// GroupNormalization of one group (as wav2vec2's feature extractor) on a branch -> "z".
inline ModelBuilder gpu_speech_encoder() {
  ModelBuilder m(18);
  m.input("x", {2, 4, 50}).output("y").output("z");
  m.random("w1", {16, 4, 5}, -0.4f, 0.4f).random("b1", {16});
  m.random("w2", {16, 4, 3}, -0.3f, 0.3f).random("chan", {16, 1});
  m.random("is", {16}, 0.5f, 1.5f).random("ib", {16}).random("wd", {16, 1, 3}, -0.5f, 0.5f);
  m.random("gs", {1}, 0.5f, 1.5f).random("gb", {1});
  auto& c1 = m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  attr(c1, "pads", std::vector<int64_t>{2, 2});
  attr(c1, "strides", std::vector<int64_t>{2});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& c2 = m.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  attr(c2, "pads", std::vector<int64_t>{1, 1});
  attr(c2, "group", int64_t{4});
  m.node("Add", {"c2", "r1"}, {"a2"}, "residual");
  m.node("Add", {"a2", "chan"}, {"a3"}, "chan_add");
  m.node("Sigmoid", {"a3"}, {"sg"}, "gate");
  m.node("Mul", {"a3", "sg"}, {"g"}, "gated");
  attr(m.node("InstanceNormalization", {"g", "is", "ib"}, {"in"}, "inorm"), "epsilon", 1e-5f);
  auto& dw = m.node("Conv", {"in", "wd"}, {"y"}, "depthwise");
  attr(dw, "pads", std::vector<int64_t>{1, 1});
  attr(dw, "group", int64_t{16});
  auto& pool = m.node("MaxPool", {"r1"}, {"p1"}, "pool1d");
  attr(pool, "kernel_shape", std::vector<int64_t>{2});
  attr(pool, "strides", std::vector<int64_t>{2});
  attr(m.node("GroupNormalization", {"p1", "gs", "gb"}, {"z"}, "gnorm"), "num_groups",
       int64_t{1});
  return m;
}

// A video network's stem (3-D convs over [N, C, D, H, W]): x [1, 3, 4, 8, 8] -> Conv3d 6 k3 +
// bias + Relu -> Conv3d 4 k(1,3,3) s(1,2,2) -> per-channel constant Add -> "y" [1, 4, 4, 4, 4].
inline ModelBuilder gpu_video_stem() {
  ModelBuilder m(13);
  m.input("x", {1, 3, 4, 8, 8}).output("y");
  m.random("w1", {6, 3, 3, 3, 3}, -0.3f, 0.3f).random("b1", {6});
  m.random("w2", {4, 6, 1, 3, 3}, -0.3f, 0.3f).random("chan", {4, 1, 1, 1});
  attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads",
       std::vector<int64_t>{1, 1, 1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& c2 = m.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  attr(c2, "pads", std::vector<int64_t>{0, 1, 1, 0, 1, 1});
  attr(c2, "strides", std::vector<int64_t>{1, 2, 2});
  m.node("Add", {"c2", "chan"}, {"y"}, "chan_add");
  return m;
}

// Heads that pick an index: x [1, 3, 16, 16] -> 1x1 Conv to 5 classes -> ArgMax over the
// classes (keepdims 0, a segmentation map, "classes" [1, 16, 16] int64, and keepdims 1 for
// GatherElements of each pixel's best score, "score" [1, 1, 16, 16]); GlobalAveragePool ->
// Flatten -> ArgMin with select_last_index (keepdims 1, "pick" [1, 1] int64) and TopK 3 of the
// 256 pixels' best scores ("top" and "top_at").
inline ModelBuilder gpu_index_heads() {
  ModelBuilder m(13);
  m.input("x", {1, 3, 16, 16});
  m.output("classes", onnx::TensorProto::INT64).output("pick", onnx::TensorProto::INT64);
  m.output("score").output("top").output("top_at", onnx::TensorProto::INT64);
  m.initializer_i64("k", {1}, {3}).initializer_i64("flat", {2}, {1, 256});
  m.random("w", {5, 3, 1, 1}).random("b", {5});
  m.node("Conv", {"x", "w", "b"}, {"logits"}, "head");
  auto& am = m.node("ArgMax", {"logits"}, {"classes"}, "argmax");
  attr(am, "axis", int64_t{1});
  attr(am, "keepdims", int64_t{0});
  attr(m.node("ArgMax", {"logits"}, {"best"}, "argmax_kept"), "axis", int64_t{1});
  attr(m.node("GatherElements", {"logits", "best"}, {"score"}, "best_score"), "axis", int64_t{1});
  m.node("Reshape", {"score", "flat"}, {"scores"}, "flatten_scores");
  m.node("TopK", {"scores", "k"}, {"top", "top_at"}, "topk");
  m.node("GlobalAveragePool", {"logits"}, {"g"}, "gap");
  m.node("Flatten", {"g"}, {"f"}, "flatten");
  auto& an = m.node("ArgMin", {"f"}, {"pick"}, "argmin");
  attr(an, "axis", int64_t{1});
  attr(an, "select_last_index", int64_t{1});
  return m;
}

// x [2, 3, 12, 10] -> Conv 3x3 (8) + Relu -> MaxPool 2 -> Conv 3x3 (16) + Relu ->
// ConvTranspose 2x2 stride 2 (16 -> 8, bias) + Relu -> Concat with the first conv -> Conv 3x3
// (8) -> Resize bilinear x2 (half_pixel) -> Conv 1x1 (4) -> y; a ConvTranspose 3x3 stride 2
// (not the upsampling form) -> z.
inline ModelBuilder gpu_unet_decoder() {
  ModelBuilder m(13);
  m.input("x", {2, 3, 12, 10}).output("y").output("z");
  const auto pads = std::vector<int64_t>{1, 1, 1, 1};
  m.random("w1", {8, 3, 3, 3}, -0.4f, 0.4f).random("b1", {8});
  m.random("w2", {16, 8, 3, 3}, -0.2f, 0.2f).random("b2", {16});
  m.random("wt", {16, 8, 2, 2}, -0.3f, 0.3f).random("bt", {8});
  m.random("w3", {8, 16, 3, 3}, -0.2f, 0.2f).random("b3", {8});
  m.random("w4", {4, 8, 1, 1}, -0.4f, 0.4f).random("b4", {4});
  m.random("wz", {16, 5, 3, 3}, -0.3f, 0.3f);
  m.initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  attr(m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1"), "pads", pads);
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& pool = m.node("MaxPool", {"r1"}, {"p"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  attr(m.node("Conv", {"p", "w2", "b2"}, {"c2"}, "conv2"), "pads", pads);
  m.node("Relu", {"c2"}, {"r2"}, "relu2");
  attr(m.node("ConvTranspose", {"r2", "wt", "bt"}, {"u"}, "up"), "strides",
       std::vector<int64_t>{2, 2});
  m.node("Relu", {"u"}, {"ur"}, "up_relu");
  attr(m.node("Concat", {"ur", "r1"}, {"cat"}, "cat"), "axis", int64_t{1});
  attr(m.node("Conv", {"cat", "w3", "b3"}, {"c3"}, "conv3"), "pads", pads);
  auto& rs = m.node("Resize", {"c3", "", "scales"}, {"big"}, "resize");
  attr(rs, "mode", std::string("linear"));
  attr(rs, "coordinate_transformation_mode", std::string("half_pixel"));
  m.node("Conv", {"big", "w4", "b4"}, {"y"}, "head");
  auto& zt = m.node("ConvTranspose", {"r2", "wz"}, {"z"}, "up3x3");
  attr(zt, "strides", std::vector<int64_t>{2, 2});
  attr(zt, "pads", pads);
  return m;
}

// A decoder block as opset-23 exporters write it: x [1, 6, 64] -> RMSNormalization -> Q, K, V
// projections -> RotaryEmbedding of Q and K (3-D, position_ids a graph input) -> Attention 3-D
// with grouped-query heads (2 Q heads, 1 KV head of 32) and is_causal -> output projection.
inline ModelBuilder gpu_transformer_block() {
  ModelBuilder m(23);
  m.input("x", {1, 6, 64}).input("pos", {1, 6}, onnx::TensorProto::INT64).output("y");
  m.random("g", {64}, 0.5f, 1.5f).random("wq", {64, 64}).random("wk", {64, 32});
  m.random("wv", {64, 32}).random("wo", {64, 64}).random("cos", {8, 16}).random("sin", {8, 16});
  m.node("RMSNormalization", {"x", "g"}, {"n"}, "rms");
  m.node("MatMul", {"n", "wq"}, {"q"}, "q_proj");
  m.node("MatMul", {"n", "wk"}, {"k"}, "k_proj");
  m.node("MatMul", {"n", "wv"}, {"v"}, "v_proj");
  attr(m.node("RotaryEmbedding", {"q", "cos", "sin", "pos"}, {"qr"}, "rope_q"), "num_heads",
       int64_t{2});
  attr(m.node("RotaryEmbedding", {"k", "cos", "sin", "pos"}, {"kr"}, "rope_k"), "num_heads",
       int64_t{1});
  auto& a = m.node("Attention", {"qr", "kr", "v"}, {"a"}, "attention");
  attr(a, "q_num_heads", int64_t{2});
  attr(a, "kv_num_heads", int64_t{1});
  attr(a, "is_causal", int64_t{1});
  m.node("MatMul", {"a", "wo"}, {"y"}, "o_proj");
  return m;
}

// Two MatMuls of 80 rows (x [2, 40, 32]): 32 -> 64 + bias + Relu, 64 -> 32 + bias + x. GPU
// plans run them as 1x1 convs (int8_gemm.h), the second with the residual in its epilogue.
inline ModelBuilder gpu_mlp_rows() {
  ModelBuilder m;
  m.input("x", {2, 40, 32}).output("y");
  m.random("w1", {32, 64}, -0.3f, 0.3f).random("b1", {64}, -0.1f, 0.1f);
  m.random("w2", {64, 32}, -0.2f, 0.2f).random("b2", {32}, -0.1f, 0.1f);
  m.node("MatMul", {"x", "w1"}, {"m1"}, "fc1");
  m.node("Add", {"m1", "b1"}, {"a1"}, "fc1_bias");
  m.node("Relu", {"a1"}, {"h"}, "fc1_relu");
  m.node("MatMul", {"h", "w2"}, {"m2"}, "fc2");
  m.node("Add", {"m2", "b2"}, {"a2"}, "fc2_bias");
  m.node("Add", {"a2", "x"}, {"y"}, "residual");
  return m;
}

// The dtypes beyond float32 and the 8/32/64-bit integers, on the steps that take them: uint32
// and int16 arithmetic and a comparison, bfloat16 in and out through Cast, float64 arithmetic
// and a ReduceLogSumExp.
inline ModelBuilder gpu_narrow_dtypes() {
  ModelBuilder m(14);
  m.input("a", {2, 3}, onnx::TensorProto::UINT32)
      .input("b", {2, 3}, onnx::TensorProto::INT16)
      .input("c", {2, 3}, onnx::TensorProto::BFLOAT16)
      .input("d", {2, 3}, onnx::TensorProto::DOUBLE)
      .input("x", {2, 3})
      .output("au", onnx::TensorProto::UINT32)
      .output("bs", onnx::TensorProto::INT16)
      .output("lt", onnx::TensorProto::BOOL)
      .output("y")
      .output("r", onnx::TensorProto::DOUBLE)
      .output("xd", onnx::TensorProto::DOUBLE)
      .output("db", onnx::TensorProto::BFLOAT16);
  m.node("Mul", {"a", "a"}, {"au"}, "mul_u32");
  m.node("Add", {"b", "b"}, {"bs"}, "add_i16");
  m.node("Less", {"b", "bs"}, {"lt"}, "less_i16");
  attr(m.node("Cast", {"c"}, {"cf"}, "bf16_to_f32"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("Add", {"cf", "x"}, {"y"}, "add_f32");
  auto& r = m.node("ReduceLogSumExp", {"d"}, {"r"}, "lse_f64");
  attr(r, "axes", std::vector<int64_t>{1});
  attr(m.node("Cast", {"x"}, {"x64"}, "f32_to_f64"), "to", int64_t{onnx::TensorProto::DOUBLE});
  m.node("Mul", {"x64", "d"}, {"xd"}, "mul_f64");
  attr(m.node("Cast", {"d"}, {"db"}, "f64_to_bf16"), "to", int64_t{onnx::TensorProto::BFLOAT16});
  return m;
}

// ONNX's quantization ops as steps of their own (no Q -> DQ pair, which is explicit INT8): x
// [2, 5, 6] -> QuantizeLinear per axis 1 (int8, scale and zero point initializers) -> xq; the int8
// graph input p [2, 5, 6] -> DequantizeLinear per axis 1 -> y; the uint8 graph input q [30] ->
// DequantizeLinear by the scale graph input s [1] -> z.
inline ModelBuilder gpu_quantize_ops() {
  ModelBuilder m(13);
  m.input("x", {2, 5, 6}).input("p", {2, 5, 6}, onnx::TensorProto::INT8);
  m.input("q", {30}, onnx::TensorProto::UINT8).input("s", {1});
  m.output("xq", onnx::TensorProto::INT8).output("y").output("z");
  m.random("qs", {5}, 0.01f, 0.05f);
  onnx::TensorProto* qz = m.empty_initializer("qz", onnx::TensorProto::INT8, {5});
  for (int32_t z : {0, 3, -2, 1, -1}) qz->add_int32_data(z);
  attr(m.node("QuantizeLinear", {"x", "qs", "qz"}, {"xq"}, "quantize"), "axis", int64_t{1});
  attr(m.node("DequantizeLinear", {"p", "qs", "qz"}, {"y"}, "dequantize"), "axis", int64_t{1});
  m.node("DequantizeLinear", {"q", "s"}, {"z"}, "dequantize_input");
  return m;
}

// A detector's selection as exporters write it: NonMaxSuppression over the graph inputs boxes
// [2, 64, 4] (corners) and scores [2, 3, 64], at most 6 a class, IoU above 0.25 suppressing,
// scores above 0 taken; its Int64 rows (a run-time count of them) the graph output.
inline ModelBuilder gpu_detector_nms() {
  ModelBuilder m(11);
  m.input("boxes", {2, 64, 4}).input("scores", {2, 3, 64});
  m.output("selected", onnx::TensorProto::INT64);
  m.initializer_i64("max_out", {1}, {6});
  m.initializer("iou", {1}, {0.25f}).initializer("min_score", {1}, {0.f});
  m.node("NonMaxSuppression", {"boxes", "scores", "max_out", "iou", "min_score"}, {"selected"},
         "nms");
  return m;
}

// A decoder's unpooling as SegNet- and ENet-style networks export it: x [1, 4, 3, 5] and the
// graph input r [1, 4, 3, 5] (int64, 0 to 3) give the indices 4 k + r (a position in each
// element's own 2x2 window's worth of y, as a MaxPool's would be) -> MaxUnpool 2x2 stride 2 -> y
// [1, 4, 6, 10] -> Relu; and the same into output_shape [1, 4, 7, 11] (the indices address the
// default shape inside it) -> z.
inline ModelBuilder gpu_unpool() {
  ModelBuilder m(11);
  m.input("x", {1, 4, 3, 5}).input("r", {1, 4, 3, 5}, onnx::TensorProto::INT64);
  m.output("y").output("z");
  std::vector<int64_t> base(60);
  for (size_t k = 0; k < base.size(); ++k) base[k] = int64_t(4 * k);
  m.initializer_i64("base", {1, 4, 3, 5}, base);
  m.initializer_i64("shape", {4}, {1, 4, 7, 11});
  m.node("Add", {"base", "r"}, {"idx"}, "indices");
  for (const char* out : {"u", "z"}) {
    std::vector<std::string> in = {"x", "idx"};
    if (std::string(out) == "z") in.push_back("shape");
    auto& n = m.node("MaxUnpool", in, {out}, std::string("unpool_") + out);
    attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
    attr(n, "strides", std::vector<int64_t>{2, 2});
  }
  m.node("Relu", {"u"}, {"y"}, "relu");
  return m;
}

// A deformable conv as detection networks export it (torchvision's deform_conv2d): x [1, 8, 9,
// 10] -> Conv 1x1 -> offsets [1, 36, 9, 10] (offset_group 2, 3x3) and, through a Sigmoid, the
// mask [1, 18, 9, 10] -> DeformConv of x, group 2, pads 1, bias -> Relu -> y.
inline ModelBuilder gpu_deform_conv() {
  ModelBuilder m(19);
  m.input("x", {1, 8, 9, 10}).output("y");
  m.random("wo", {36, 8, 1, 1}, -0.5f, 0.5f).random("wm", {18, 8, 1, 1});
  m.random("w", {12, 4, 3, 3}).random("b", {12});
  m.node("Conv", {"x", "wo"}, {"offset"}, "offset_conv");
  m.node("Conv", {"x", "wm"}, {"mask_logits"}, "mask_conv");
  m.node("Sigmoid", {"mask_logits"}, {"mask"}, "mask");
  auto& n = m.node("DeformConv", {"x", "w", "offset", "b", "mask"}, {"d"}, "dcn");
  attr(n, "group", int64_t{2});
  attr(n, "offset_group", int64_t{2});
  attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"d"}, {"y"}, "relu");
  return m;
}

// A YOLO-style detection head over two scales: a conv to 3 anchors x 4 values, reshaped to
// [N, 3, 4, H, W], permuted to [N, 3, H, W, 4], flattened to [N, 3HW, 4], the scales
// concatenated and a Sigmoid (YOLOv5's export).
inline ModelBuilder gpu_detect_head() {
  ModelBuilder m;
  m.input("x", {2, 6, 8, 8}).output("y");
  m.random("w0", {12, 6, 1, 1}, -0.4f, 0.4f).random("b0", {12});
  m.random("w1", {12, 6, 3, 3}, -0.3f, 0.3f).random("b1", {12});
  m.node("Conv", {"x", "w0", "b0"}, {"h0"}, "head0");
  auto& down = m.node("Conv", {"x", "w1", "b1"}, {"h1"}, "head1");
  attr(down, "strides", std::vector<int64_t>{2, 2});
  attr(down, "pads", std::vector<int64_t>{1, 1, 1, 1});
  std::vector<std::string> flat;
  for (int i = 0; i < 2; ++i) {
    const std::string s = std::to_string(i);
    const int64_t hw = i == 0 ? 8 : 4;
    m.initializer_i64("split" + s, {5}, {2, 3, 4, hw, hw});
    m.initializer_i64("flat" + s, {3}, {2, 3 * hw * hw, 4});
    m.node("Reshape", {"h" + s, "split" + s}, {"r" + s}, "split" + s);
    attr(m.node("Transpose", {"r" + s}, {"t" + s}, "permute" + s), "perm",
         std::vector<int64_t>{0, 1, 3, 4, 2});
    m.node("Reshape", {"t" + s, "flat" + s}, {"f" + s}, "flatten" + s);
    flat.push_back("f" + s);
  }
  attr(m.node("Concat", flat, {"cat"}, "cat"), "axis", int64_t{1});
  m.node("Sigmoid", {"cat"}, {"y"}, "sigmoid");
  return m;
}

// A PAN neck as YOLO-style detectors export it: x [2, 8, 8, 8] -> Conv 1x1 (8) + Relu -> c0,
// read by the top-down Concat and by the downsampling conv below; Conv 3x3 s2 (16) + Relu ->
// lat -> Conv 1x1 (8) -> red, read by the Resize (nearest x2) and by the bottom-up Concat;
// Concat(up, c0) -> Conv 3x3 (8) + Relu -> td; Conv 3x3 s2 of td (8) -> down; Concat(down, red,
// Conv 1x1 of c0 s2) -> Conv 1x1 (6) -> y [2, 6, 4, 4]; td -> z [2, 8, 8, 8]. GPU plans write the
// Concats in place where the producer can (the Resize, the convs read once) and copy the rest.
inline ModelBuilder gpu_pan_neck() {
  ModelBuilder m(13);
  m.input("x", {2, 8, 8, 8}).output("y").output("z");
  const auto pads = std::vector<int64_t>{1, 1, 1, 1};
  m.random("w0", {8, 8, 1, 1}, -0.4f, 0.4f).random("b0", {8});
  m.random("wl", {16, 8, 3, 3}, -0.2f, 0.2f).random("bl", {16});
  m.random("wr", {8, 16, 1, 1}, -0.3f, 0.3f).random("br", {8});
  m.random("wt", {8, 16, 3, 3}, -0.2f, 0.2f).random("bt", {8});
  m.random("wd", {8, 8, 3, 3}, -0.2f, 0.2f).random("bd", {8});
  m.random("ws", {4, 8, 1, 1}, -0.4f, 0.4f).random("bs", {4});
  m.random("wy", {6, 20, 1, 1}, -0.3f, 0.3f).random("by", {6});
  m.initializer("scales", {4}, {1.f, 1.f, 2.f, 2.f});
  m.node("Conv", {"x", "w0", "b0"}, {"c0a"}, "conv0");
  m.node("Relu", {"c0a"}, {"c0"}, "relu0");
  auto& lat = m.node("Conv", {"c0", "wl", "bl"}, {"lata"}, "lateral");
  attr(lat, "strides", std::vector<int64_t>{2, 2});
  attr(lat, "pads", pads);
  m.node("Relu", {"lata"}, {"lat"}, "lateral_relu");
  m.node("Conv", {"lat", "wr", "br"}, {"red"}, "reduce");
  attr(m.node("Resize", {"red", "", "scales"}, {"up"}, "up"), "mode", std::string("nearest"));
  attr(m.node("Concat", {"up", "c0"}, {"cat1"}, "cat_td"), "axis", int64_t{1});
  attr(m.node("Conv", {"cat1", "wt", "bt"}, {"tda"}, "td"), "pads", pads);
  m.node("Relu", {"tda"}, {"z"}, "td_relu");
  auto& down = m.node("Conv", {"z", "wd", "bd"}, {"down"}, "down");
  attr(down, "strides", std::vector<int64_t>{2, 2});
  attr(down, "pads", pads);
  attr(m.node("Conv", {"c0", "ws", "bs"}, {"skip"}, "skip"), "strides",
       std::vector<int64_t>{2, 2});
  attr(m.node("Concat", {"down", "red", "skip"}, {"cat2"}, "cat_bu"), "axis", int64_t{1});
  m.node("Conv", {"cat2", "wy", "by"}, {"y"}, "out");
  return m;
}

inline std::vector<GpuPlanModel> gpu_plan_models() {
  return {{"conv_net", gpu_conv_net()},
          {"encoder", gpu_encoder()},
          {"data_movement", gpu_data_movement()},
          {"speech_encoder", gpu_speech_encoder()},
          {"video_stem", gpu_video_stem()},
          {"index_heads", gpu_index_heads(), false},
          {"unet_decoder", gpu_unet_decoder()},
          {"transformer_block", gpu_transformer_block()},
          {"mlp_rows", gpu_mlp_rows()},
          {"narrow_dtypes", gpu_narrow_dtypes()},
          {"quantize_ops", gpu_quantize_ops()},
          {"detector_nms", gpu_detector_nms()},
          {"unpool", gpu_unpool()},
          {"deform_conv", gpu_deform_conv()},
          {"detect_head", gpu_detect_head()},
          {"pan_neck", gpu_pan_neck()}};
}

}  // namespace jetplan::converter::testing
