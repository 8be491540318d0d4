// Opsets 18 to 28, past libonnx 1.12's schemas: each form ONNX added or redefined there, written
// at a later opset, converts for the CPU and runs like the same computation written at opset 17
// (or like a handwritten reference); malformed nodes of those forms, ops newer than the model's
// opset and definitions the converter does not read are refused naming the node.
#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "converter/src/import/onnx_definitions.h"
#include "tests/converter/util/old_model_util.h"
#include "tests/converter/util/run_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::Not;

const std::vector<int64_t> kShape = {2, 6, 4, 5};
constexpr size_t kCount = 2 * 6 * 4 * 5;

// A model of `opset` with input x [2, 6, 4, 5] and output y, whose nodes `body` writes.
ModelBuilder model(int opset, const std::function<void(ModelBuilder&, int)>& body) {
  ModelBuilder m(opset);
  m.model().set_ir_version(opset > kLibOnnxOpset ? 10 : 8);
  m.input("x", kShape).output("y");
  body(m, opset);
  return m;
}

std::vector<float> run_model(const ModelBuilder& m, const std::vector<float>& x) {
  const ConvertResult r = convert_ok(m);
  if (r.plan.empty()) return {};
  return run_plan(r, {x});
}

// The model written at each of `opsets` runs like the one written at opset 17.
void expect_like_opset17(const std::function<void(ModelBuilder&, int)>& body,
                         const std::vector<int>& opsets) {
  const std::vector<float> x = ramp(kCount, 0.37f, -3.f);
  const std::vector<float> want = run_model(model(17, body), x);
  ASSERT_FALSE(want.empty());
  for (int opset : opsets) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    expect_near(run_model(model(opset, body), x), want);
  }
}

TEST(NewerOpsets, EveryOpsetFrom18To28Converts) {
  for (int opset = 18; opset <= kNewestOnnxOpset; ++opset) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    const std::vector<float> x = ramp(kCount);
    std::vector<float> want(kCount);
    for (size_t i = 0; i < kCount; ++i) want[i] = std::max(0.f, x[i] * 2.f);
    expect_near(run_model(model(opset,
                                [](ModelBuilder& m, int) {
                                  m.node("Add", {"x", "x"}, {"s"}, "add");
                                  m.node("Relu", {"s"}, {"y"}, "relu");
                                }),
                          x),
                want);
  }
}

TEST(NewerOpsets, ReductionsWithAxesAsAnInput) {
  for (const char* op : {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
                         "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    SCOPED_TRACE(op);
    const bool positive = std::string(op) == "ReduceLogSum";  // log of a sum of ramp values
    expect_like_opset17(
        [&](ModelBuilder& m, int opset) {
          const std::string in = positive ? "a" : "x";
          if (positive) m.node("Abs", {"x"}, {"a"}, "abs");
          auto& n = m.node(
              op, opset >= 18 ? std::vector<std::string>{in, "axes"} : std::vector<std::string>{in},
              {"r"}, "reduce");
          if (opset >= 18)
            m.initializer_i64("axes", {2}, {1, -1});
          else
            attr(n, "axes", std::vector<int64_t>{1, -1});
          attr(n, "keepdims", int64_t{0});
          m.node("Relu", {"r"}, {"y"}, "relu");
        },
        {18, 20, 23, 28});
  }
  // noop_with_empty_axes: no axes is the input unchanged (opset 18 on); without it, every axis.
  const std::vector<float> x = ramp(kCount);
  auto reduce_without_axes = [](int64_t noop) {
    return model(20, [noop](ModelBuilder& m, int) {
      attr(m.node("ReduceMax", {"x"}, {"y"}, "max"), "noop_with_empty_axes", noop);
    });
  };
  expect_near(run_model(reduce_without_axes(1), x), x);
  expect_near(run_model(reduce_without_axes(0), x), {*std::max_element(x.begin(), x.end())});
}

TEST(NewerOpsets, SplitWithNumOutputs) {
  // Opset 18's num_outputs: equal parts of ceil(5 / 3) = 2, the last one smaller.
  expect_like_opset17(
      [](ModelBuilder& m, int opset) {
        auto& n = m.node(
            "Split",
            opset >= 18 ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "sizes"},
            {"a", "b", "c"}, "split");
        attr(n, "axis", int64_t{-1});
        if (opset >= 18)
          attr(n, "num_outputs", int64_t{3});
        else
          m.initializer_i64("sizes", {3}, {2, 2, 1});
        m.node("Mul", {"a", "b"}, {"ab"}, "mul");
        m.node("Concat", {"ab", "c"}, {"y"}, "concat");
        attr(*m.model().mutable_graph()->mutable_node(2), "axis", int64_t{-1});
      },
      {18, 21, 28});
}

TEST(NewerOpsets, PadWithAxesAndWrap) {
  // Pad's axes input (opset 18): the pads of the listed axes only.
  expect_like_opset17(
      [](ModelBuilder& m, int opset) {
        if (opset >= 18) {
          m.initializer_i64("pads", {4}, {1, 2, 0, 1}).initializer_i64("axes", {2}, {1, 3});
          attr(m.node("Pad", {"x", "pads", "", "axes"}, {"y"}, "pad"), "mode",
               std::string("reflect"));
        } else {
          m.initializer_i64("pads", {8}, {0, 1, 0, 2, 0, 0, 0, 1});
          attr(m.node("Pad", {"x", "pads"}, {"y"}, "pad"), "mode", std::string("reflect"));
        }
      },
      {18, 19, 24});
  // mode 'wrap' (opset 19) against the numpy definition on the last axis: x[.., (j - 2) mod 5].
  ModelBuilder m = model(19, [](ModelBuilder& b, int) {
    b.initializer_i64("pads", {2}, {2, 1}).initializer_i64("axes", {1}, {3});
    attr(b.node("Pad", {"x", "pads", "", "axes"}, {"y"}, "pad"), "mode", std::string("wrap"));
  });
  const std::vector<float> x = ramp(kCount);
  std::vector<float> want;
  for (size_t row = 0; row < kCount / 5; ++row)
    for (int j = 0; j < 8; ++j) want.push_back(x[row * 5 + size_t((j - 2 + 5) % 5)]);
  expect_near(run_model(m, x), want);
}

TEST(NewerOpsets, ResizeWithTheOpset18Attributes) {
  // antialias 0, keep_aspect_ratio_policy 'stretch' and axes naming every dim: the opset 13 form.
  expect_like_opset17(
      [](ModelBuilder& m, int opset) {
        m.initializer("scales", {4}, {1.f, 1.f, 2.f, 1.5f});
        auto& n = m.node("Resize", {"x", "", "scales"}, {"y"}, "resize");
        attr(n, "mode", std::string("linear"));
        if (opset >= 18) {
          attr(n, "antialias", int64_t{0});
          attr(n, "keep_aspect_ratio_policy", std::string("stretch"));
          attr(n, "axes", std::vector<int64_t>{0, 1, 2, 3});
        }
      },
      {18, 19, 28});
}

TEST(NewerOpsets, GeluOfOpset20) {
  // Gelu (opset 20) against its erf form written at opset 17.
  expect_like_opset17(
      [](ModelBuilder& m, int opset) {
        if (opset >= 20) {
          m.node("Gelu", {"x"}, {"y"}, "gelu");
          return;
        }
        m.initializer("sqrt2", {}, {std::sqrt(2.f)}).initializer("one", {}, {1.f});
        m.initializer("half", {}, {0.5f});
        m.node("Div", {"x", "sqrt2"}, {"d"}, "div");
        m.node("Erf", {"d"}, {"e"}, "erf");
        m.node("Add", {"e", "one"}, {"p"}, "add");
        m.node("Mul", {"x", "p"}, {"xp"}, "mul");
        m.node("Mul", {"xp", "half"}, {"y"}, "half");
      },
      {20, 22, 28});
  // approximate='tanh' against its formula.
  ModelBuilder m = model(20, [](ModelBuilder& b, int) {
    attr(b.node("Gelu", {"x"}, {"y"}, "gelu"), "approximate", std::string("tanh"));
  });
  const std::vector<float> x = ramp(kCount, 0.37f, -3.f);
  std::vector<float> want;
  for (float v : x) {
    const double d = v;
    want.push_back(
        float(0.5 * d * (1 + std::tanh(std::sqrt(2 / M_PI) * (d + 0.044715 * d * d * d)))));
  }
  const std::vector<float> got = run_model(m, x);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f) << i;
}

TEST(NewerOpsets, GroupNormalizationOfOpset21ScalesEachChannel) {
  // Opset 21: scale and bias per channel. Per-group values repeated over each group's channels
  // at opset 21 give the opset-18 result.
  const std::vector<float> x = ramp(kCount, 0.37f, -3.f);
  auto group_norm = [](int opset) {
    return model(opset, [](ModelBuilder& m, int v) {
      if (v >= 21)
        m.initializer("s", {6}, {0.5f, 0.5f, -2.f, -2.f, 1.5f, 1.5f})
            .initializer("b", {6}, {0.f, 0.f, 1.f, 1.f, -0.25f, -0.25f});
      else
        m.initializer("s", {3}, {0.5f, -2.f, 1.5f}).initializer("b", {3}, {0.f, 1.f, -0.25f});
      attr(m.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"), "num_groups", int64_t{3});
    });
  };
  const std::vector<float> want = run_model(group_norm(18), x);
  ASSERT_FALSE(want.empty());
  expect_near(run_model(group_norm(21), x), want);
  expect_near(run_model(group_norm(28), x), want);
  // The opset-18 form in an opset-21 model: scale of the group count, not the channel count.
  EXPECT_THAT(
      convert_error(model(21,
                          [](ModelBuilder& m, int) {
                            m.initializer("s", {3}, {1, 1, 1}).initializer("b", {3}, {0, 0, 0});
                            attr(m.node("GroupNormalization", {"x", "s", "b"}, {"y"}, "gn"),
                                 "num_groups", int64_t{3});
                          })),
      HasSubstr("'gn' (GroupNormalization)"));
}

TEST(NewerOpsets, AveragePoolWithDilations) {
  // AveragePool of opset 19 takes dilations: a 2x2 window with dilation 2 against its sum.
  ModelBuilder m = model(19, [](ModelBuilder& b, int) {
    auto& n = b.node("AveragePool", {"x"}, {"y"}, "pool");
    attr(n, "kernel_shape", std::vector<int64_t>{2, 2});
    attr(n, "dilations", std::vector<int64_t>{2, 2});
  });
  const std::vector<float> x = ramp(kCount);
  std::vector<float> want;
  for (size_t plane = 0; plane < 12; ++plane)
    for (size_t i = 0; i < 2; ++i)
      for (size_t j = 0; j < 3; ++j) {
        const float* p = &x[plane * 20];
        want.push_back(
            (p[i * 5 + j] + p[i * 5 + j + 2] + p[(i + 2) * 5 + j] + p[(i + 2) * 5 + j + 2]) / 4.f);
      }
  expect_near(run_model(m, x), want);
}

TEST(NewerOpsets, OpsThatOnlyGainedTypesReadAsBefore) {
  // IsNaN and IsInf (opset 20), Cast (19: saturate, for float8 only), Where, Conv (22): the
  // opset-17 meaning, with Cast's saturate accepted.
  expect_like_opset17(
      [](ModelBuilder& m, int opset) {
        m.initializer("zero", {}, {0.f})
            .initializer("w", {3, 6, 1, 1}, std::vector<float>(18, 0.25f));
        m.node("Div", {"x", "zero"}, {"q"}, "div");  // inf, and nan where x is 0
        m.node("IsNaN", {"q"}, {"nan"}, "isnan");
        m.node("IsInf", {"q"}, {"inf"}, "isinf");
        m.node("Or", {"nan", "inf"}, {"bad"}, "or");
        m.node("Where", {"bad", "zero", "x"}, {"clean"}, "where");
        auto& cast = m.node("Cast", {"clean"}, {"c"}, "cast");
        attr(cast, "to", int64_t{onnx::TensorProto::FLOAT});
        if (opset >= 19) attr(cast, "saturate", int64_t{1});
        m.node("Conv", {"c", "w"}, {"y"}, "conv");
      },
      {19, 20, 22, 28});
}

TEST(NewerOpsets, QuantizeAndDequantizeWithTheirNewerAttributes) {
  // QuantizeLinear of opset 21 without a zero point quantizes to output_dtype (int8 here),
  // DequantizeLinear of opset 23 takes output_dtype float32: the opset-17 pair with an int8
  // zero point of 0.
  expect_like_opset17(
      [](ModelBuilder& m, int opset) {
        m.initializer("scale", {}, {0.05f});
        if (opset < 21) {
          raw_initializer(m, "zp", onnx::TensorProto::INT8, {}, {0});
          m.node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}, "q");
          m.node("DequantizeLinear", {"q", "scale", "zp"}, {"y"}, "dq");
          return;
        }
        attr(m.node("QuantizeLinear", {"x", "scale"}, {"q"}, "q"), "output_dtype",
             int64_t{onnx::TensorProto::INT8});
        auto& dq = m.node("DequantizeLinear", {"q", "scale"}, {"y"}, "dq");
        if (opset >= 23) attr(dq, "output_dtype", int64_t{onnx::TensorProto::FLOAT});
      },
      {21, 23, 28});
  ModelBuilder blocked = model(21, [](ModelBuilder& b, int) {
    b.initializer("scale", {}, {0.1f});
    attr(b.node("QuantizeLinear", {"x", "scale"}, {"q"}, "q"), "block_size", int64_t{5});
    b.node("DequantizeLinear", {"q", "scale"}, {"y"}, "dq");
  });
  EXPECT_THAT(convert_error(blocked),
              HasSubstr("'q' (QuantizeLinear): blocked quantization (block_size, opset 21) is "
                        "not supported"));
}

TEST(NewerOpsets, ModOfOpset28) {
  // fmod=1 on floats is C's fmod at every opset; fmod=0 on floats (floor) is new at 28 and
  // refused by name.
  expect_like_opset17(
      [](ModelBuilder& m, int) {
        m.initializer("d", {}, {0.75f});
        attr(m.node("Mod", {"x", "d"}, {"y"}, "mod"), "fmod", int64_t{1});
      },
      {28});
  EXPECT_THAT(convert_error(model(28,
                                  [](ModelBuilder& b, int) {
                                    b.initializer("d", {}, {0.75f});
                                    b.node("Mod", {"x", "d"}, {"y"}, "mod");
                                  })),
              HasSubstr("'mod' (Mod): Mod of float32 with fmod=0 (floor, opset 28) is not "
                        "supported"));
}

TEST(NewerOpsets, IsInfOfFloat16FromOpset20) {
  // Opset 20 lets IsInf take float16 (libonnx's opset-10 schema does not): x / 0 is inf but
  // where x is 0 (nan).
  ModelBuilder m = model(20, [](ModelBuilder& b, int) {
    b.initializer("zero", {}, {0.f});
    b.node("Div", {"x", "zero"}, {"q"}, "div");
    attr(b.node("Cast", {"q"}, {"h"}, "to_half"), "to", int64_t{onnx::TensorProto::FLOAT16});
    b.node("IsInf", {"h"}, {"inf"}, "isinf");
    attr(b.node("Cast", {"inf"}, {"y"}, "to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  });
  const std::vector<float> x = ramp(kCount, 0.5f, -1.f);
  std::vector<float> want;
  for (float v : x) want.push_back(v != 0.f ? 1.f : 0.f);
  ASSERT_NE(std::count(want.begin(), want.end(), 0.f), 0);
  expect_near(run_model(m, x), want);
}

// ---- refusals ----

TEST(NewerOpsets, MalformedNodesAreNamedTogether) {
  ModelBuilder m = model(20, [](ModelBuilder& b, int) {
    b.initializer_i64("axes", {1}, {1});
    attr(b.node("ReduceMean", {"x", "axes"}, {"r"}, "mean"), "keep_dims", int64_t{1});
    auto& split = b.node("Split", {"r"}, {"a", "c"}, "split");
    attr(split, "num_outputs", 2.f);  // an int attribute given as a float
    b.node("Gelu", {"a", "c"}, {"y"}, "gelu");
  });
  EXPECT_EQ(convert_error(m),
            "invalid ONNX model: 3 nodes do not match the op's definition at opset 20: 'mean' "
            "(ReduceMean): attribute 'keep_dims' is not an attribute of ReduceMean at opset 20 "
            "(its attributes: keepdims, noop_with_empty_axes); 'split' (Split): attribute "
            "'num_outputs' is of type float, not int; 'gelu' (Gelu): 2 inputs (it takes 1)");
}

TEST(NewerOpsets, MalformedFormsAreNamed) {
  EXPECT_THAT(convert_error(model(
                  18,
                  [](ModelBuilder& b, int) {
                    attr(b.node("Split", {"x"}, {"a", "y"}, "split"), "num_outputs", int64_t{3});
                  })),
              HasSubstr("'split' (Split): num_outputs is 3 but the node has 2 outputs"));
  EXPECT_THAT(convert_error(model(18,
                                  [](ModelBuilder& b, int) {
                                    b.initializer_i64("sizes", {2}, {2, 3});
                                    auto& n = b.node("Split", {"x", "sizes"}, {"a", "y"}, "split");
                                    attr(n, "axis", int64_t{3});
                                    attr(n, "num_outputs", int64_t{2});
                                  })),
              HasSubstr("'split' (Split): give the split input or num_outputs, not both"));
  // Axes computed at run time (a graph input): named among the unsupported nodes.
  ModelBuilder run_time_axes = model(18, [](ModelBuilder& b, int) {
    b.node("ReduceMean", {"x", "axes"}, {"y"}, "mean");
  });
  run_time_axes.input("axes", {1}, onnx::TensorProto::INT64);
  EXPECT_THAT(convert_error(run_time_axes),
              HasSubstr("'mean' (ReduceMean): its axes input is computed at run time"));
}

TEST(NewerOpsets, OpsNewerThanTheModelAndUnknownOpsAreNamedInOneError) {
  ModelBuilder m = model(18, [](ModelBuilder& b, int) {
    b.node("Gelu", {"x"}, {"g"}, "gelu");
    b.node("Frobnicate", {"g"}, {"f"}, "frob");
    b.node("Relu", {"f"}, {"y"}, "relu");
  });
  EXPECT_EQ(convert_error(m),
            "2 unsupported nodes: 'gelu' (Gelu): Gelu is not an op of opset 18 (ONNX adds it at "
            "opset 20); 'frob' (Frobnicate): no such op in jetplan");
}

// SpaceToDepth of x [2, 6, 4, 5] cut to [2, 6, 4, 4] (blocksize 2), with `mode` where given.
void space_to_depth(ModelBuilder& b, const std::string& mode) {
  b.initializer_i64("ends", {1}, {4}).initializer_i64("zero", {1}, {0});
  b.initializer_i64("axis", {1}, {3});
  b.node("Slice", {"x", "zero", "ends", "axis"}, {"cut"}, "cut");
  auto& n = b.node("SpaceToDepth", {"cut"}, {"y"}, "s2d");
  attr(n, "blocksize", int64_t{2});
  if (!mode.empty()) attr(n, "mode", mode);
}

TEST(NewerOpsets, SpaceToDepthModesOfOpset28) {
  // DCR, the default, is the order of the earlier opsets.
  expect_like_opset17(
      [](ModelBuilder& m, int opset) { space_to_depth(m, opset >= 28 ? "DCR" : ""); }, {28});
  // CRD: output channel c * 4 + bh * 2 + bw holds x[n, c, 2 * i + bh, 2 * j + bw].
  const std::vector<float> x = ramp(kCount);
  std::vector<float> want;
  for (size_t n = 0; n < 2; ++n)
    for (size_t c = 0; c < 6; ++c)
      for (size_t bh = 0; bh < 2; ++bh)
        for (size_t bw = 0; bw < 2; ++bw)
          for (size_t i = 0; i < 2; ++i)
            for (size_t j = 0; j < 2; ++j)
              want.push_back(x[((n * 6 + c) * 4 + 2 * i + bh) * 5 + 2 * j + bw]);
  expect_near(run_model(model(28, [](ModelBuilder& m, int) { space_to_depth(m, "CRD"); }), x),
              want);
}

TEST(NewerOpsets, DefinitionsTheConverterDoesNotReadAreRefusedWithTheirOpset) {
  // Range of opset 27 (stash_type; it folds only) is never read with the older meaning, and is
  // named beside the other unsupported nodes.
  ModelBuilder m = model(27, [](ModelBuilder& b, int) {
    b.initializer("start", {}, {0.f}).initializer("limit", {}, {3.f});
    b.initializer("delta", {}, {1.f});
    b.node("Range", {"start", "limit", "delta"}, {"r"}, "range");
    b.node("Frobnicate", {"x"}, {"y"}, "frob");
  });
  m.output("r");
  EXPECT_EQ(convert_error(m),
            "2 unsupported nodes: 'range' (Range): opset 27 redefined Range and jetplan reads its "
            "definitions up to opset 17 only (the model imports opset 27; export with opset 26); "
            "'frob' (Frobnicate): no such op in jetplan");
  // ... while at opset 26 Range is the old one (folded): x + [0, 1, 2, 3, 4] on the last dim.
  const std::vector<float> x = ramp(kCount);
  std::vector<float> want;
  for (size_t i = 0; i < kCount; ++i) want.push_back(x[i] + float(i % 5));
  expect_near(run_model(model(26,
                              [](ModelBuilder& b, int) {
                                b.initializer("start", {}, {0.f}).initializer("limit", {}, {5.f});
                                b.initializer("delta", {}, {1.f});
                                b.node("Range", {"start", "limit", "delta"}, {"r"}, "range");
                                b.node("Add", {"x", "r"}, {"y"}, "add");
                              }),
                        x),
              want);
}

TEST(NewerOpsets, NewerElementTypesAreNamed) {
  // float8 (IR version 9) in an initializer and int4 (IR version 10) at a graph input.
  ModelBuilder m = model(21, [](ModelBuilder& b, int) {
    raw_initializer(b, "w8", 17, {2}, {0x38, 0x40});  // FLOAT8E4M3FN (libonnx 1.12 has no name)
    b.node("Cast", {"w8"}, {"w"}, "cast");
    b.node("Add", {"x", "w"}, {"y"}, "add");
  });
  EXPECT_EQ(convert_error(m),
            "unsupported element types (plans hold float32, float16, bfloat16, float64, int8, "
            "uint8, int16, uint16, int32, uint32, int64, uint64 and bool): initializer 'w8' is "
            "float8e4m3fn");
  ModelBuilder input = model(21, [](ModelBuilder& b, int) { b.node("Relu", {"x"}, {"y"}); });
  input.input("q", {4}, 22);  // INT4
  EXPECT_THAT(convert_error(input), HasSubstr("graph input 'q': int4 is not supported"));
}

TEST(NewerOpsets, OpsetsPastTheNewestAreRefused) {
  ModelBuilder m = model(kNewestOnnxOpset + 1,
                         [](ModelBuilder& b, int) { b.node("Relu", {"x"}, {"y"}, "relu"); });
  EXPECT_THAT(convert_error(m), AllOf(StartsWith("opset 29 is newer than jetplan-convert reads"),
                                      HasSubstr("opset_version=28")));
}

TEST(NewerOpsets, DefinitionTableLookups) {
  EXPECT_EQ(newer_definition("Relu", 28), nullptr);
  EXPECT_EQ(newer_definition("Split", 17), nullptr);
  ASSERT_NE(newer_definition("Split", 23), nullptr);
  EXPECT_EQ(newer_definition("Split", 23)->since_version, 18);
  ASSERT_NE(newer_definition("Resize", 19), nullptr);
  EXPECT_EQ(newer_definition("Resize", 19)->since_version, 19);
  EXPECT_EQ(first_newer_opset("Gelu"), 20);
  EXPECT_EQ(first_newer_opset("Pad"), 0);  // redefined, not added
}

}  // namespace
}  // namespace jetplan::converter::testing
