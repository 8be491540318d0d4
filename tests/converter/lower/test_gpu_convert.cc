// GPU plans (--target of a CUDA device) built without a GPU: targets/*.json, NHWC layout,
// float16 precision, kernel selection and its one error for every step without a CUDA kernel.
#include <gmock/gmock.h>

#include <cstring>

#include <fstream>
#include <map>
#include <set>

#include "converter/src/select/targets.h"
#include "kernels/cpu/half.h"
#include "kernels/cuda/select.h"
#include "tests/converter/util/convert_util.h"
#include "tests/converter/util/quantized_util.h"

namespace jetplan::converter::testing {
namespace {

// x [1,2,8,8] -> Conv(4, 3x3, pad 1) + Relu -> MaxPool 2x2 -> Add per-channel constant -> "a"
// (an output too) -> GlobalAveragePool -> Flatten -> Gemm(3) -> "y".
ModelBuilder conv_net() {
  ModelBuilder m;
  m.input("x", {1, 2, 8, 8}).output("y").output("a");
  m.random("w", {4, 2, 3, 3}).random("b", {4}).random("k", {4, 1, 1});
  m.random("gw", {3, 4}).random("gb", {3});
  attr(m.node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  auto& pool = m.node("MaxPool", {"r"}, {"p"}, "pool");
  attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  attr(pool, "strides", std::vector<int64_t>{2, 2});
  m.node("Add", {"p", "k"}, {"a"}, "add");
  m.node("GlobalAveragePool", {"a"}, {"g"}, "gap");
  m.node("Flatten", {"g"}, {"f"}, "flatten");
  attr(m.node("Gemm", {"f", "gw", "gb"}, {"y"}, "fc"), "transB", int64_t{1});
  return m;
}

ModelBuilder pointwise_net() {
  ModelBuilder m;
  m.input("x", {2, 8}).input("z", {2, 8}).output("y");
  m.random("k", {8});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("Mul", {"r", "k"}, {"m"}, "mul");
  m.node("Add", {"m", "z"}, {"s"}, "add");
  m.node("Sigmoid", {"s"}, {"y"}, "sigmoid");
  return m;
}

ConvertOptions gpu(const std::string& target, bool select = true) {
  ConvertOptions o;
  o.target = target;
  o.select_kernels = select;
  return o;
}

ConvertResult convert(const ModelBuilder& m, const ConvertOptions& o) {
  return convert_onnx(m.bytes(), "model.onnx", o);
}

std::map<std::string, const fb::Step*> steps_by_name(const fb::Plan* plan) {
  std::map<std::string, const fb::Step*> out;
  for (const auto* s : *plan->steps()) out[s->name()->str()] = s;
  return out;
}

std::vector<int64_t> shape(const fb::Plan* plan, uint32_t t) {
  const auto* v = plan->tensors()->Get(t)->shape();
  return std::vector<int64_t>(v->begin(), v->end());
}

// Either every step has a kernel of its family from the variant table, or the conversion
// failed with one error naming the steps whose family has no CUDA kernel yet; never a step
// whose family has a selector today (`have`).
void expect_kernels_or_one_error(const ModelBuilder& m, const std::string& target,
                                 const std::set<fb::OpFamily>& have) {
  const ConvertResult unselected = convert(m, gpu(target, false));
  const auto steps = steps_by_name(plan_of(unselected));
  try {
    const ConvertResult r = convert(m, gpu(target));
    const fb::Plan* plan = plan_of(r);
    const Target t = find_target(target);
    for (const auto* s : *plan->steps()) {
      // What the CUDA backend checks when it binds a step (backend_cuda.cc bind_step).
      const std::string name = s->name()->str();
      const auto* v = kernels::cuda::find_kernel_variant(s->kernel()->c_str());
      ASSERT_NE(v, nullptr) << name << ": " << s->kernel()->str();
      EXPECT_EQ(v->family, static_cast<uint16_t>(s->op())) << name;
      const fb::LaunchConfig& l = *s->launch();
      EXPECT_GT(l.grid_x() * l.grid_y() * l.grid_z(), 0u) << name;
      const uint32_t threads = l.block_x() * l.block_y() * l.block_z();
      EXPECT_GT(threads, 0u) << name;
      EXPECT_LE(threads, 1024u) << name;
      if (v->block_threads != 0) {
        EXPECT_EQ(threads, v->block_threads) << name;
      }
      EXPECT_GE(l.shared_bytes(), v->shared_bytes) << name;
      EXPECT_LE(l.shared_bytes(), t.device.max_shared_per_block) << name;
      if (v->dtype != kernels::cuda::kAnyDType) {  // as the backend's bind_step checks
        const uint8_t out = v->out_dtype != kernels::cuda::kAnyDType ? v->out_dtype : v->dtype;
        EXPECT_EQ(static_cast<uint8_t>(plan->tensors()->Get(s->outputs()->Get(0))->dtype()), out)
            << name;
        if (s->inputs()->size() > 0) {
          EXPECT_EQ(static_cast<uint8_t>(plan->tensors()->Get(s->inputs()->Get(0))->dtype()),
                    v->dtype)
              << name;
        }
      }
    }
    EXPECT_EQ(convert(m, gpu(target)).plan, r.plan);  // byte-identical
  } catch (const ConvertError& e) {
    const std::string what = e.what();
    bool all_have = true;  // every family of the plan has CUDA kernels: it must convert
    for (const auto& [name, step] : steps)
      all_have &= kernels::cuda::has_selector(static_cast<uint16_t>(step->op()));
    EXPECT_FALSE(all_have) << what;
    const std::string head = "target " + target + ": no CUDA kernel for ";
    ASSERT_THAT(what, StartsWith(head));
    // "'name' (Family): why; 'name' (Family): why"
    size_t listed = 0;
    for (size_t at = what.find(": '"); at != std::string::npos; at = what.find("; '", at + 1)) {
      const size_t open = at + 3, close = what.find("' (", open);
      ASSERT_NE(close, std::string::npos) << what;
      const std::string name = what.substr(open, close - open);
      const size_t fam_end = what.find(')', close);
      const std::string family = what.substr(close + 3, fam_end - close - 3);
      ASSERT_TRUE(steps.count(name)) << name << " in " << what;
      EXPECT_EQ(family, fb::EnumNameOpFamily(steps.at(name)->op())) << what;
      EXPECT_EQ(have.count(steps.at(name)->op()), 0u) << name << " has a selector: " << what;
      EXPECT_THAT(what.substr(fam_end), StartsWith("): ")) << what;
      ++listed;
    }
    EXPECT_THAT(what, HasSubstr(head + std::to_string(listed) + (listed == 1 ? " step: " : " steps: ")));
  }
}

TEST(GpuTargets, KnownAndParsed) {
  const std::vector<std::string> known = known_targets();
  EXPECT_EQ(known.front(), "cpu");
  for (const char* name : {"orin-agx", "orin-nx", "orin-nano", "thor", "h100", "h200", "rtx4090",
                           "a6000", "rtx3090"}) {
    EXPECT_NE(std::find(known.begin(), known.end(), name), known.end()) << name;
    const Target t = find_target(name);
    EXPECT_EQ(t.plan.name, name);
    EXPECT_EQ(t.plan.backend, fb::Backend::CUDA);
    EXPECT_EQ(t.plan.sm_arch, t.device.sm_arch);
    EXPECT_GT(t.device.sm_count, 0u);
    EXPECT_LE(t.device.max_shared_per_block, t.device.shared_per_sm);
  }
  const Target h100 = find_target("h100");
  EXPECT_EQ(h100.device.sm_arch, 90u);
  EXPECT_EQ(h100.device.sm_count, 132u);
  EXPECT_EQ(h100.device.max_shared_per_block, 232448u);
  EXPECT_EQ(find_target("orin-agx").device.sm_arch, 87u);
  EXPECT_EQ(find_target("thor").device.sm_arch, 110u);
}

TEST(GpuTargets, MalformedFilesNameTheFileAndKey) {
  const std::string good =
      "{\"name\": \"dev\", \"backend\": \"cuda\", \"sm_arch\": 87, \"sm_count\": 8, "
      "\"max_shared_per_block\": 1024, \"shared_per_sm\": 2048, \"l2_bytes\": 4096, "
      "\"dram_gbps\": 100.5, \"fp16_tensor_tflops\": 1e1}";
  const Target t = parse_target_json(good, "dev.json");
  EXPECT_EQ(t.device.sm_count, 8u);
  EXPECT_DOUBLE_EQ(t.device.fp16_tensor_tflops, 10.0);
  auto error = [](const std::string& text) {
    try {
      parse_target_json(text, "dev.json");
    } catch (const ConvertError& e) {
      return std::string(e.what());
    }
    return std::string("(parsed)");
  };
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_EQ(error(with("\"l2_bytes\"", "\"l2\"")), "target file 'dev.json': unknown key 'l2'");
  EXPECT_EQ(error(with("\"sm_count\": 8, ", "")), "target file 'dev.json': missing key 'sm_count'");
  EXPECT_EQ(error(with("87", "\"87\"")), "target file 'dev.json': key 'sm_arch' must be a number");
  EXPECT_EQ(error(with("87", "8.7")),
            "target file 'dev.json': key 'sm_arch' must be a non-negative integer");
  EXPECT_EQ(error(with("\"cuda\"", "\"opencl\"")),
            "target file 'dev.json': key 'backend' must be \"cuda\" (the only device backend)");
  EXPECT_EQ(error(with("1e1}", "1e1,}")), "target file 'dev.json' line 1: expected a key (a string)");
  EXPECT_EQ(error(with("100.5", "fast")),
            "target file 'dev.json' line 1: the value of 'dram_gbps' is not a string or a number");
  EXPECT_EQ(error(good + "x"), "target file 'dev.json' line 1: unexpected text after the object");
  EXPECT_EQ(error(with("\"sm_count\": 8", "\"sm_arch\": 8")),
            "target file 'dev.json' line 1: key 'sm_arch' appears twice");
  EXPECT_EQ(error(""), "target file 'dev.json' line 1: the file must hold one JSON object");
}

TEST(GpuConvert, UnknownTargetAndTargetFiles) {
  ConvertOptions o = gpu("mars");
  EXPECT_THAT(convert_error(conv_net(), o), StartsWith("unknown target 'mars' (known: cpu, a6000, h100"));
  const std::string path = ::testing::TempDir() + "jetplan_gpu_target.json";
  std::ofstream(path) << "{\"name\": \"dev\", \"backend\": \"cuda\"}";
  o.target = path;
  EXPECT_EQ(convert_error(conv_net(), o),
            "target file '" + path + "': missing key 'sm_arch'");
  o.target = ::testing::TempDir() + "no_such_target.json";
  EXPECT_THAT(convert_error(conv_net(), o), StartsWith("cannot read target file '"));
}

TEST(GpuConvert, ConvNetLayoutPrecisionAndWeights) {
  ModelBuilder m = conv_net();
  const ConvertResult r = convert(m, gpu("h100", false));
  const fb::Plan* plan = plan_of(r);
  EXPECT_EQ(plan->target()->name()->str(), "h100");
  EXPECT_EQ(plan->target()->backend(), fb::Backend::CUDA);
  EXPECT_EQ(plan->target()->sm_arch(), 90u);
  EXPECT_EQ(plan->metadata()->options()->LookupByKey("target")->value()->str(), "h100");

  // Bindings keep float32 and their ONNX shapes.
  const fb::Tensor* x = plan->tensors()->Get(plan->inputs()->Get(0)->tensor());
  EXPECT_EQ(x->dtype(), fb::DType::Float32);
  EXPECT_EQ(shape(plan, plan->inputs()->Get(0)->tensor()), (std::vector<int64_t>{1, 2, 8, 8}));
  EXPECT_EQ(x->layout(), fb::Layout::NCHW);
  for (const auto* b : *plan->outputs())
    EXPECT_EQ(plan->tensors()->Get(b->tensor())->dtype(), fb::DType::Float32);
  EXPECT_EQ(shape(plan, plan->outputs()->Get(1)->tensor()), (std::vector<int64_t>{1, 4, 4, 4}));
  // Everything else is float16.
  for (const auto* t : *plan->tensors()) {
    if (t->storage() != fb::Storage::Binding) {
      EXPECT_EQ(t->dtype(), fb::DType::Float16) << t->name()->str();
    }
  }

  // Steps in order: no cast in (the NHWC transpose reads float32 "x" and writes float16: the
  // input cast fused into it), the NHWC chain, no cast out: the NCHW transpose writes float32
  // "a" and fc float32 "y" themselves (the output-cast epilogue). Flatten of the [1, 1, 1, C]
  // NHWC pool output is a view of its bytes, no step.
  std::vector<std::pair<std::string, fb::OpFamily>> order;
  for (const auto* s : *plan->steps()) order.emplace_back(s->name()->str(), s->op());
  using F = fb::OpFamily;
  const std::vector<std::pair<std::string, F>> expected = {
      {"x:to_nhwc", F::Transpose}, {"conv+relu", F::Conv},
      {"pool", F::Pool},        {"add", F::Binary},              {"a:to_nchw", F::Transpose},
      {"gap", F::Pool},         {"fc", F::Gemm}};
  ASSERT_EQ(order.size(), expected.size());
  for (size_t i = 0; i < order.size(); ++i) {
    EXPECT_EQ(order[i].first, expected[i].first) << i;
    EXPECT_EQ(order[i].second, expected[i].second) << order[i].first;
  }
  const auto steps = steps_by_name(plan);
  auto out_shape = [&](const char* step) { return shape(plan, steps.at(step)->outputs()->Get(0)); };
  auto out_layout = [&](const char* step) {
    return plan->tensors()->Get(steps.at(step)->outputs()->Get(0))->layout();
  };
  EXPECT_EQ(out_shape("conv+relu"), (std::vector<int64_t>{1, 8, 8, 4}));
  EXPECT_EQ(out_layout("conv+relu"), fb::Layout::NHWC);
  EXPECT_EQ(out_shape("pool"), (std::vector<int64_t>{1, 4, 4, 4}));
  EXPECT_EQ(out_shape("add"), (std::vector<int64_t>{1, 4, 4, 4}));
  EXPECT_EQ(out_layout("add"), fb::Layout::NHWC);
  EXPECT_EQ(out_shape("gap"), (std::vector<int64_t>{1, 1, 1, 4}));
  const fb::Step* to_nchw = steps.at("a:to_nchw");
  EXPECT_EQ(to_nchw->outputs()->Get(0), plan->outputs()->Get(1)->tensor());
  EXPECT_EQ(plan->tensors()->Get(to_nchw->inputs()->Get(0))->dtype(), fb::DType::Float16);
  EXPECT_EQ(out_layout("gap"), fb::Layout::NHWC);
  // fc reads the flattened view of gap's bytes.
  const fb::Tensor* flat = plan->tensors()->Get(steps.at("fc")->inputs()->Get(0));
  EXPECT_EQ(flat->view_of(), static_cast<int32_t>(steps.at("gap")->outputs()->Get(0)));
  EXPECT_EQ(flat->offset(), plan->tensors()->Get(flat->view_of())->offset());
  EXPECT_EQ(shape(plan, steps.at("fc")->inputs()->Get(0)), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(steps.at("x:to_nhwc")->params_as_TransposeParams()->perm()->Get(1), 2);
  EXPECT_EQ(steps.at("x:to_nhwc")->inputs()->Get(0), plan->inputs()->Get(0)->tensor());
  EXPECT_EQ(plan->tensors()->Get(steps.at("x:to_nhwc")->outputs()->Get(0))->dtype(),
            fb::DType::Float16);
  EXPECT_EQ(steps.at("a:to_nchw")->params_as_TransposeParams()->perm()->Get(1), 3);
  // The per-channel constant of the Add is [1, 1, 1, C].
  EXPECT_EQ(shape(plan, steps.at("add")->inputs()->Get(1)), (std::vector<int64_t>{1, 1, 1, 4}));

  // Conv weights [Cout, KH, KW, Cin] float16, each the ONNX value rounded.
  const onnx::TensorProto* w = nullptr;
  for (const auto& init : m.model().graph().initializer())
    if (init.name() == "w") w = &init;
  ASSERT_NE(w, nullptr);
  const uint32_t wt = steps.at("conv+relu")->inputs()->Get(1);
  EXPECT_EQ(shape(plan, wt), (std::vector<int64_t>{4, 3, 3, 2}));
  const fb::Tensor* wtensor = plan->tensors()->Get(wt);
  ASSERT_EQ(wtensor->size_bytes(), 4u * 3 * 3 * 2 * 2);
  const auto* half = reinterpret_cast<const uint16_t*>(plan->weights()->data() + wtensor->offset());
  for (int o = 0; o < 4; ++o)
    for (int c = 0; c < 2; ++c)
      for (int y = 0; y < 3; ++y)
        for (int xx = 0; xx < 3; ++xx) {
          const float onnx_value = w->float_data(((o * 2 + c) * 3 + y) * 3 + xx);
          EXPECT_EQ(half[((o * 3 + y) * 3 + xx) * 2 + c], kernels::half_from_float(onnx_value))
              << o << c << y << xx;
        }
  // No weight is left behind in float32 or unused.
  for (const auto* t : *plan->tensors()) {
    if (t->storage() == fb::Storage::Weight) {
      EXPECT_NE(t->name()->str(), "w");
    }
  }

  // Deterministic.
  EXPECT_EQ(convert(m, gpu("h100", false)).plan, r.plan);
  // With kernels chosen, the NCHW transpose is the FP16-in, FP32-out one.
  const ConvertResult k = convert(m, gpu("h100"));
  EXPECT_EQ(steps_by_name(plan_of(k)).at("a:to_nchw")->kernel()->str(), "jp_transpose_tiled_h2f");
  // and the NHWC one the FP32-in, FP16-out one.
  EXPECT_EQ(steps_by_name(plan_of(k)).at("x:to_nhwc")->kernel()->str(), "jp_transpose_tiled_f2h");
}

TEST(GpuConvert, ConvNetKernelsOrOneErrorForAllMissing) {
  for (const std::string& target : known_targets()) {
    if (target == "cpu") continue;
    SCOPED_TRACE(target);
    expect_kernels_or_one_error(conv_net(), target, {fb::OpFamily::Activation, fb::OpFamily::Binary});
  }
}

TEST(GpuConvert, PointwiseNet) {
  const ModelBuilder m = pointwise_net();
  const fb::Plan* plan = nullptr;
  const ConvertResult r = convert(m, gpu("h100", false));
  plan = plan_of(r);
  std::vector<std::string> names;
  for (const auto* s : *plan->steps()) names.push_back(s->name()->str());
  // The chain is one Pointwise step (fuse_pointwise.cc).
  EXPECT_EQ(names, (std::vector<std::string>{"x:to_f16", "z:to_f16", "relu+mul+add+sigmoid",
                                             "y:to_f32"}));
  // Pointwise steps have CUDA kernels today: only the binding casts may be missing.
  const std::set<fb::OpFamily> have = {fb::OpFamily::Activation, fb::OpFamily::Binary,
                                       fb::OpFamily::Pointwise};
  expect_kernels_or_one_error(m, "h100", have);
  expect_kernels_or_one_error(m, "rtx3090", have);
}

// BERT's attention mask: an int64 input cast to float, then (1 - m) * float32_min. The Cast
// runs on the GPU (int64 -> float16) and the constant saturates to -65504 in float16 rather
// than becoming -inf (0 * -inf would be NaN where m = 1).
TEST(GpuConvert, IntegerMaskCastAndSaturatedConstants) {
  ModelBuilder m;
  m.input("mask", {2, 8}, onnx::TensorProto::INT64).input("scores", {2, 8}).output("y");
  m.initializer("one", {}, {1.f}).initializer("lowest", {}, {-3.4028235e38f});
  attr(m.node("Cast", {"mask"}, {"mf"}, "cast"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.node("Sub", {"one", "mf"}, {"inv"}, "invert");
  m.node("Mul", {"inv", "lowest"}, {"bias"}, "scale");
  m.node("Add", {"scores", "bias"}, {"y"}, "add");
  const ConvertResult r = convert(m, gpu("h100"));
  const fb::Plan* plan = plan_of(r);
  const fb::Step* cast = nullptr;
  for (const auto* s : *plan->steps())
    if (s->name()->str() == "cast") cast = s;
  ASSERT_NE(cast, nullptr);
  EXPECT_EQ(cast->kernel()->str(), "jp_cast_i64_f16");
  bool saturated = false;
  for (const auto* t : *plan->tensors()) {
    if (t->storage() != fb::Storage::Weight || t->size_bytes() != 2) continue;
    uint16_t h = 0;
    std::memcpy(&h, plan->weights()->data() + t->offset(), 2);
    if (t->name()->str().find("lowest") != std::string::npos) {
      EXPECT_EQ(h, 0xfbffu) << "float32 lowest becomes -65504 in float16";
      saturated = true;
    }
  }
  EXPECT_TRUE(saturated);
}

// QuantizeLinear and DequantizeLinear read a Float32 scale in GPU plans: a scale initializer
// stays Float32, a scale graph input is not cast to Float16, a scale computed in the plan is
// cast back to Float32 in front of its reader, and a float32 graph input that only a
// QuantizeLinear reads is quantized as given (jp_quantize_f32_i8).
TEST(GpuConvert, QuantizationScalesStayFloat32) {
  ModelBuilder m;
  m.input("x", {2, 6}).input("q", {12}, onnx::TensorProto::UINT8).input("s", {1});
  m.input("w", {2, 6});
  m.output("xq", onnx::TensorProto::INT8).output("z").output("wq", onnx::TensorProto::INT8);
  m.initializer("xs", {}, {0.05f});
  m.empty_initializer("xz", onnx::TensorProto::INT8, {})->add_int32_data(0);
  m.node("QuantizeLinear", {"x", "xs", "xz"}, {"xq"}, "quantize");
  m.node("DequantizeLinear", {"q", "s"}, {"z"}, "dequantize");
  attr(m.node("ReduceMax", {"w"}, {"wmax"}, "range"), "keepdims", int64_t{0});  // a computed scale
  m.node("Relu", {"w"}, {"wr"}, "relu");
  m.node("QuantizeLinear", {"wr", "wmax", "xz"}, {"wq"}, "quantize_computed");
  const ConvertResult r = convert(m, gpu("h100"));
  const fb::Plan* plan = plan_of(r);
  const auto steps = steps_by_name(plan);
  auto dtype_of_input = [&](const std::string& step, uint32_t k) {
    return plan->tensors()->Get(steps.at(step)->inputs()->Get(k))->dtype();
  };
  ASSERT_EQ(steps.count("quantize"), 1u);
  EXPECT_EQ(steps.at("quantize")->kernel()->str(), "jp_quantize_f32_i8");
  EXPECT_EQ(dtype_of_input("quantize", 1), fb::DType::Float32);
  EXPECT_EQ(steps.at("dequantize")->kernel()->str(), "jp_dequantize_u8_f16");
  EXPECT_EQ(dtype_of_input("dequantize", 1), fb::DType::Float32);
  EXPECT_EQ(dtype_of_input("quantize_computed", 0), fb::DType::Float16);
  EXPECT_EQ(dtype_of_input("quantize_computed", 1), fb::DType::Float32);
}

// GPU parity (issue 14): every op family of kernels/op_families.def has CUDA kernels, so no
// step is refused for its family alone (gpu_select still names every such step in one error,
// should a CPU_ONLY family be added).
TEST(GpuConvert, EveryOpFamilyHasCudaKernels) {
  for (uint16_t f = 0; f < kernels::kOpFamilyCount; ++f)
    EXPECT_TRUE(kernels::cuda::has_selector(f))
        << fb::EnumNameOpFamily(static_cast<fb::OpFamily>(f)) << " is CPU_ONLY";
}

// NonMaxSuppression on the GPU: its boxes and scores stay Float32 (graph inputs read as given,
// a computed score Cast back from Float16), its rows are Int64 of run-time extent, and the plan
// names jp_nms_f32 with a workspace and loads.
TEST(GpuConvert, NmsReadsFloat32AndCountsItsRows) {
  ModelBuilder m(11);
  m.input("b", {1, 6, 4}).input("s", {1, 2, 6});
  m.output("y", onnx::TensorProto::INT64);
  m.initializer_i64("most", {1}, {3});
  m.initializer("iou", {1}, {0.5f});
  m.node("Sigmoid", {"s"}, {"p"}, "sigmoid");
  m.node("NonMaxSuppression", {"b", "p", "most", "iou"}, {"y"}, "nms");
  const ConvertResult r = convert(m, gpu("h100"));
  const fb::Plan* plan = plan_of(r);
  const auto steps = steps_by_name(plan);
  ASSERT_EQ(steps.count("nms"), 1u);
  const fb::Step* nms = steps.at("nms");
  EXPECT_EQ(nms->kernel()->str(), "jp_nms_f32");
  EXPECT_GT(nms->workspace_bytes(), 0u);
  for (uint32_t k = 0; k < 2; ++k)
    EXPECT_EQ(plan->tensors()->Get(nms->inputs()->Get(k))->dtype(), fb::DType::Float32) << k;
  EXPECT_GE(plan->outputs()->Get(0)->count_tensor(), 0);
  EXPECT_TRUE(loads_without_device(r.plan));
}

// QLinearMatMul on the GPU (ONNX Runtime's QOperator format): its three scales stay Float32 in
// the plan (the kernel reads them so), the plan names jp_qlinear_matmul and loads.
TEST(GpuConvert, QLinearMatMulKeepsItsScalesFloat32) {
  ModelBuilder m(10);
  m.input("a", {4, 4}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("a_scale", {}, {0.02f}).initializer("b_scale", {}, {0.01f});
  m.initializer("y_scale", {}, {0.05f});
  u8_initializer(m, "zp", {}, {128});
  u8_initializer(m, "b", {4, 4}, std::vector<uint8_t>(16, 140));
  m.node("QLinearMatMul", {"a", "a_scale", "zp", "b", "b_scale", "zp", "y_scale", "zp"}, {"y"},
         "qmm");
  const ConvertResult r = convert(m, gpu("h100"));
  const fb::Plan* plan = plan_of(r);
  const fb::Step* s = steps_by_name(plan).at("qmm");
  EXPECT_EQ(s->kernel()->str(), "jp_qlinear_matmul");
  for (uint32_t k : {1u, 4u, 6u})
    EXPECT_EQ(plan->tensors()->Get(s->inputs()->Get(k))->dtype(), fb::DType::Float32) << k;
  EXPECT_TRUE(loads_without_device(r.plan));
}

// DynamicQuantizeLinear on the GPU: a graph input is quantized as given (Float32, no Cast), an
// activation as the plan holds it (Float16); the computed scale stays Float32 for the
// DequantizeLinear that reads it. The plan loads.
TEST(GpuConvert, DynamicQuantizeReadsFloat32InputsAndWritesAFloat32Scale) {
  ModelBuilder m;
  m.input("x", {2, 64}).output("y", onnx::TensorProto::UINT8).output("s");
  m.output("z", onnx::TensorProto::UINT8).output("d");
  m.node("DynamicQuantizeLinear", {"x"}, {"y", "s", "z"}, "dq");
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node("DynamicQuantizeLinear", {"r"}, {"y2", "s2", "z2"}, "dq2");
  m.node("DequantizeLinear", {"y2", "s2", "z2"}, {"d"}, "back");
  const ConvertResult r = convert(m, gpu("h100"));
  const fb::Plan* plan = plan_of(r);
  const auto steps = steps_by_name(plan);
  auto dtype = [&](const std::string& step, bool input, uint32_t k) {
    const auto* list = input ? steps.at(step)->inputs() : steps.at(step)->outputs();
    return plan->tensors()->Get(list->Get(k))->dtype();
  };
  EXPECT_EQ(steps.at("dq")->kernel()->str(), "jp_dynamic_quantize_f32");
  EXPECT_EQ(dtype("dq", true, 0), fb::DType::Float32);
  EXPECT_EQ(steps.at("dq2")->kernel()->str(), "jp_dynamic_quantize_f16");
  EXPECT_EQ(dtype("dq2", true, 0), fb::DType::Float16);
  EXPECT_EQ(dtype("dq2", false, 1), fb::DType::Float32);
  EXPECT_EQ(dtype("back", true, 1), fb::DType::Float32);
  EXPECT_TRUE(loads_without_device(r.plan));
}

// The output-cast epilogue: a plan ending in a Gemm (a classifier head) has no Cast back to
// float32: the Gemm reads FP16 and writes the float32 binding with an _f32out kernel. Where no
// such kernel exists (a transposed A) the Cast stays, and so it does after other producers.
TEST(GpuConvert, GemmWritesTheFloat32OutputItself) {
  for (const std::string& target : {std::string("h100"), std::string("orin-agx")}) {
    SCOPED_TRACE(target);
    ModelBuilder m;
    m.input("x", {2, 16}).input("xt", {16, 2}).output("y").output("z").output("t");
    m.random("w", {10, 16}).random("b", {10}).random("v", {16, 4});
    attr(m.node("Gemm", {"x", "w", "b"}, {"y"}, "head"), "transB", int64_t{1});
    attr(m.node("Gemm", {"xt", "v"}, {"z"}, "head_ta"), "transA", int64_t{1});
    m.node("Relu", {"x"}, {"t"}, "relu");
    const ConvertResult r = convert(m, gpu(target));
    const fb::Plan* plan = plan_of(r);
    const auto steps = steps_by_name(plan);
    ASSERT_TRUE(steps.count("head"));
    const fb::Step* head = steps.at("head");
    const uint32_t y = plan->outputs()->Get(0)->tensor();
    EXPECT_EQ(head->outputs()->Get(0), y);
    EXPECT_EQ(plan->tensors()->Get(y)->dtype(), fb::DType::Float32);
    EXPECT_EQ(plan->tensors()->Get(head->inputs()->Get(0))->dtype(), fb::DType::Float16);
    EXPECT_EQ(head->kernel()->str(), "jp_gemm_f16_gemv_bt_f32out");
    EXPECT_EQ(steps.count("y:to_f32"), 0u);
    // No variant writes FP32 with a transposed A: FP16 and a Cast, as before.
    ASSERT_TRUE(steps.count("head_ta"));
    EXPECT_EQ(plan->tensors()->Get(steps.at("head_ta")->outputs()->Get(0))->dtype(),
              fb::DType::Float16);
    ASSERT_TRUE(steps.count("z:to_f32"));
    EXPECT_EQ(steps.at("z:to_f32")->outputs()->Get(0), plan->outputs()->Get(1)->tensor());
    EXPECT_EQ(steps.at("z:to_f32")->op(), fb::OpFamily::Cast);
    // Other producers keep their Cast.
    EXPECT_EQ(steps.count("t:to_f32"), 1u);
    // Every step's kernel fits its tensors as the backend checks them.
    expect_kernels_or_one_error(m, target, {});
  }
  // An output another step reads stays FP16 inside, with a Cast.
  ModelBuilder m;
  m.input("x", {2, 16}).output("y").output("s");
  m.random("w", {10, 16});
  attr(m.node("Gemm", {"x", "w"}, {"y"}, "head"), "transB", int64_t{1});
  m.node("Sigmoid", {"y"}, {"s"}, "sig");
  const ConvertResult r = convert(m, gpu("h100"));
  const auto steps = steps_by_name(plan_of(r));
  EXPECT_EQ(steps.count("y:to_f32"), 1u);
  EXPECT_EQ(steps.at("head")->kernel()->str(), "jp_gemm_f16_gemv_bt");
}

// sm_90 targets run large convs in the Hopper tiles (kernels for that arch only), other targets
// and --portable-kernels in the tiles every arch has; each plan loads without a device.
TEST(GpuConvert, HopperTilesOnlyForSm90AndNotWithPortableKernels) {
  ModelBuilder m;
  m.input("x", {1, 768, 40, 40}).output("y");
  m.random("w", {512, 768, 1, 1}).random("b", {512});
  m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  const auto conv_kernel = [&](const std::string& target, bool portable) {
    ConvertOptions o = gpu(target);
    o.portable_kernels = portable;
    const ConvertResult r = convert(m, o);
    EXPECT_TRUE(loads_without_device(r.plan)) << target;
    return steps_by_name(plan_of(r)).at("conv")->kernel()->str();
  };
  EXPECT_EQ(conv_kernel("h100", false), "jp_conv_igemm_wg64x128_f16");
  EXPECT_EQ(conv_kernel("h200", false), "jp_conv_igemm_wg64x128_f16");
  for (const auto& [target, portable] : {std::pair<const char*, bool>{"h100", true},
                                         {"orin-agx", false}, {"thor", false}}) {
    const std::string k = conv_kernel(target, portable);
    EXPECT_THAT(k, ::testing::StartsWith("jp_conv_igemm_")) << target;
    EXPECT_EQ(k.find("_wg"), std::string::npos) << target << " " << k;
  }
}

TEST(GpuConvert, CpuPlansAreUnchanged) {
  const ConvertResult r = convert_ok(conv_net());
  for (const auto* s : *plan_of(r)->steps()) EXPECT_EQ(s->kernel()->str(), "");
  for (const auto* t : *plan_of(r)->tensors()) EXPECT_EQ(t->dtype(), fb::DType::Float32);
}

}  // namespace
}  // namespace jetplan::converter::testing
