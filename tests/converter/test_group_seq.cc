// The seq group through the converter and the runtime: RNN, LSTM and GRU, QuantizeLinear and
// DequantizeLinear, QLinearMatMul and QLinearConv. Converted plans are checked against the plan
// contract and loaded (and, where the wiring of inputs and outputs matters, run) in process
// against references written here; hand-built plans check that load refuses hostile seq steps.
#include <gmock/gmock.h>
#include <jetplan/jetplan.h>

#include <cctype>
#include <cmath>
#include <cstring>
#include <functional>
#include <set>
#include <utility>

#include "kernels/cpu/seq_quant_ops.h"
#include "tests/converter/test_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// ---------------------------------------------------------------------------------- helpers

template <typename T>
void typed_initializer(ModelBuilder& m, const std::string& name, int type,
                       const std::vector<int64_t>& dims, const std::vector<T>& values) {
  auto* t = m.model().mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : dims) t->add_dims(d);
  t->set_raw_data(
      std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T)));
}

void u8_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<uint8_t>& v) {
  typed_initializer(m, name, onnx::TensorProto::UINT8, dims, v);
}
void i8_initializer(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<int8_t>& v) {
  typed_initializer(m, name, onnx::TensorProto::INT8, dims, v);
}

// Converts, checks the contract and that the runtime loads the plan.
ConvertResult convert_seq(const ModelBuilder& m) {
  ConvertResult r;
  try {
    r = convert_onnx(m.bytes(), "model.onnx", ConvertOptions{});
  } catch (const ConvertError& e) {
    ADD_FAILURE() << "conversion failed: " << e.what();
    return r;
  }
  for (const std::string& p : plan_contract_problems(r.plan)) ADD_FAILURE() << "contract: " << p;
  jp_plan* plan = nullptr;
  if (jp_plan_load_buffer(r.plan.data(), r.plan.size(), JP_LOAD_COPY, &plan) != JP_OK)
    ADD_FAILURE() << "the runtime refuses the plan: " << jp_last_error();
  jp_plan_destroy(plan);
  return r;
}

const fb::Plan* plan_of(const ConvertResult& r) {
  const fb::Plan* plan = read_plan(r.plan);
  EXPECT_NE(plan, nullptr);
  return plan;
}

const fb::Step* only_step(const fb::Plan* plan, fb::OpFamily op) {
  const fb::Step* found = nullptr;
  for (const auto* s : *plan->steps())
    if (s->op() == op) {
      EXPECT_EQ(found, nullptr) << "two steps of " << fb::EnumNameOpFamily(op);
      found = s;
    }
  EXPECT_NE(found, nullptr) << "no step of " << fb::EnumNameOpFamily(op);
  return found;
}

using Bytes = std::vector<uint8_t>;

template <typename T>
Bytes bytes_of(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <typename T>
std::vector<T> values_of(const Bytes& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
  return v;
}

// Runs a plan once with the inputs in binding order; the outputs in binding order.
std::vector<Bytes> run_plan(const std::vector<uint8_t>& buffer, const std::vector<Bytes>& inputs) {
  std::vector<Bytes> outputs;
  jp_plan* plan = nullptr;
  jp_context* ctx = nullptr;
  if (jp_plan_load_buffer(buffer.data(), buffer.size(), JP_LOAD_COPY, &plan) != JP_OK ||
      jp_context_create(plan, nullptr, &ctx) != JP_OK) {
    ADD_FAILURE() << "load: " << jp_last_error();
    jp_plan_destroy(plan);
    return outputs;
  }
  EXPECT_EQ(jp_plan_num_inputs(plan), static_cast<int32_t>(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    EXPECT_EQ(
        jp_context_set_input(ctx, static_cast<int32_t>(i), inputs[i].data(), inputs[i].size()),
        JP_OK)
        << "input " << i << ": " << jp_last_error();
  EXPECT_EQ(jp_context_run(ctx), JP_OK) << jp_last_error();
  for (int32_t i = 0; i < jp_plan_num_outputs(plan); ++i) {
    const void* data = nullptr;
    size_t bytes = 0;
    EXPECT_EQ(jp_context_get_output(ctx, i, &data, &bytes), JP_OK);
    const uint8_t* p = static_cast<const uint8_t*>(data);
    outputs.emplace_back(p, p + bytes);
  }
  jp_context_destroy(ctx);
  jp_plan_destroy(plan);
  return outputs;
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.f, float hi = 1.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// ---------------------------------------------------------------------------------- recurrent

// An LSTM with every optional input and output, H = 3, S = 3, N = 2, I = 4.
ModelBuilder full_lstm() {
  ModelBuilder m(14);
  m.input("X", {3, 2, 4}).input("lens", {2}, onnx::TensorProto::INT32);
  m.input("h0", {1, 2, 3}).input("c0", {1, 2, 3});
  m.output("Y").output("Y_h").output("Y_c");
  m.random("W", {1, 12, 4}).random("R", {1, 12, 3}).random("B", {1, 24}).random("P", {1, 9});
  auto& n =
      m.node("LSTM", {"X", "W", "R", "B", "lens", "h0", "c0", "P"}, {"Y", "Y_h", "Y_c"}, "lstm");
  attr(n, "hidden_size", int64_t{3});
  return m;
}

TEST(SeqRnn, LstmWithEveryInputIsOneStep) {
  const ConvertResult r = convert_seq(full_lstm());
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  ASSERT_EQ(plan->steps()->size(), 1u);
  const fb::Step* s = plan->steps()->Get(0);
  ASSERT_EQ(s->op(), fb::OpFamily::Rnn);
  const fb::RnnParams* p = s->params_as_RnnParams();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->cell(), fb::RnnCell::Lstm);
  EXPECT_EQ(p->direction(), fb::RnnDirection::Forward);
  EXPECT_EQ(p->hidden_size(), 3);
  EXPECT_FALSE(p->batch_major());
  EXPECT_TRUE(p->has_bias() && p->has_sequence_lens() && p->has_initial_h() && p->has_initial_c() &&
              p->has_peepholes());
  EXPECT_TRUE(p->has_y() && p->has_y_h() && p->has_y_c());
  EXPECT_FALSE(p->has_clip() || p->input_forget() || p->linear_before_reset());
  ASSERT_EQ(p->activations()->size(), 3u);
  EXPECT_EQ(p->activations()->Get(0)->kind(), fb::RnnActivationKind::Sigmoid);
  EXPECT_EQ(p->activations()->Get(1)->kind(), fb::RnnActivationKind::Tanh);
  EXPECT_EQ(p->activations()->Get(2)->kind(), fb::RnnActivationKind::Tanh);
  EXPECT_EQ(s->inputs()->size(), 8u);
  ASSERT_EQ(s->outputs()->size(), 3u);
  EXPECT_THAT(tensor_shape(plan, s->outputs()->Get(0)), ElementsAre(3, 1, 2, 3));
  EXPECT_THAT(tensor_shape(plan, s->outputs()->Get(1)), ElementsAre(1, 2, 3));
  EXPECT_THAT(tensor_shape(plan, s->outputs()->Get(2)), ElementsAre(1, 2, 3));
  kernels::RnnParams k;
  k.hidden_size = 3;
  EXPECT_EQ(s->workspace_bytes(), static_cast<uint64_t>(kernels::cpu::rnn_workspace_bytes(k)));
  EXPECT_EQ(s->workspace_offset() % plan->arena_alignment(), 0u);
  EXPECT_LE(s->workspace_offset() + s->workspace_bytes(), plan->arena_bytes());
}

// sequence_lens reaches the kernel: a batch entry of length 0 has zero outputs and states,
// the full-length one has none that are all zero.
TEST(SeqRnn, LstmSequenceLengthsReachTheKernel) {
  const ConvertResult r = convert_seq(full_lstm());
  const auto out =
      run_plan(r.plan, {bytes_of(random_floats(24, 1)), bytes_of(std::vector<int32_t>{3, 0}),
                        bytes_of(random_floats(6, 2)), bytes_of(random_floats(6, 3))});
  ASSERT_EQ(out.size(), 3u);
  const std::vector<float> y = values_of<float>(out[0]), y_h = values_of<float>(out[1]),
                           y_c = values_of<float>(out[2]);
  ASSERT_EQ(y.size(), 18u);  // [S=3, D=1, N=2, H=3]
  for (int t = 0; t < 3; ++t)
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(y[(t * 2 + 1) * 3 + j], 0.f) << "t " << t;
      EXPECT_NE(y[(t * 2 + 0) * 3 + j], 0.f) << "t " << t;
    }
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(y_h[3 + j], 0.f);
    EXPECT_EQ(y_c[3 + j], 0.f);
    EXPECT_EQ(y_h[j], y[(2 * 2 + 0) * 3 + j]);  // the last step's output
  }
}

TEST(SeqRnn, UnreadOutputsAreNotComputed) {
  ModelBuilder m(14);
  m.input("X", {2, 1, 3}).output("Y_h");
  m.random("W", {1, 12, 3}).random("R", {1, 12, 4});
  auto& n = m.node("GRU", {"X", "W", "R"}, {"Y", "Y_h"}, "gru");
  attr(n, "hidden_size", int64_t{4});
  attr(n, "linear_before_reset", int64_t{1});
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = only_step(plan, fb::OpFamily::Rnn);
  ASSERT_NE(s, nullptr);
  const fb::RnnParams* p = s->params_as_RnnParams();
  EXPECT_EQ(p->cell(), fb::RnnCell::Gru);
  EXPECT_TRUE(p->linear_before_reset());
  EXPECT_FALSE(p->has_y());
  EXPECT_TRUE(p->has_y_h());
  EXPECT_EQ(s->outputs()->size(), 1u);
  EXPECT_EQ(p->activations()->size(), 2u);
}

// A tanh RNN in double, written from the ONNX equations: x [S, N, I] (or [N, S, I]), w [D, H, I],
// r [D, H, H], b [D, 2H]; y [S, D, N, H] (or [N, S, D, H]).
std::vector<float> reference_rnn(const std::vector<float>& x, const std::vector<float>& w,
                                 const std::vector<float>& r, const std::vector<float>& b,
                                 const std::vector<int32_t>& lens, int64_t S, int64_t N, int64_t I,
                                 int64_t H, int64_t D, bool batch_major, bool reverse_only) {
  std::vector<float> y(S * D * N * H, 0.f);
  for (int64_t d = 0; d < D; ++d)
    for (int64_t n = 0; n < N; ++n) {
      std::vector<double> h(H, 0.0);
      const bool backwards = reverse_only || d == 1;
      for (int64_t s = 0; s < lens[n]; ++s) {
        const int64_t t = backwards ? lens[n] - 1 - s : s;
        const float* xt = &x[(batch_major ? n * S + t : t * N + n) * I];
        std::vector<double> next(H);
        for (int64_t j = 0; j < H; ++j) {
          double acc = b[d * 2 * H + j] + b[d * 2 * H + H + j];
          for (int64_t i = 0; i < I; ++i) acc += double{w[(d * H + j) * I + i]} * xt[i];
          for (int64_t k = 0; k < H; ++k) acc += double{r[(d * H + j) * H + k]} * h[k];
          next[j] = std::tanh(acc);
        }
        h = next;
        for (int64_t j = 0; j < H; ++j) {
          const int64_t at = batch_major ? ((n * S + t) * D + d) * H : ((t * D + d) * N + n) * H;
          y[at + j] = static_cast<float>(h[j]);
        }
      }
    }
  return y;
}

TEST(SeqRnn, BidirectionalBatchMajorMatchesTheReference) {
  const int64_t S = 4, N = 2, I = 3, H = 5, D = 2;
  const std::vector<float> w = random_floats(D * H * I, 11), r = random_floats(D * H * H, 12),
                           b = random_floats(D * 2 * H, 13), x = random_floats(N * S * I, 14);
  ModelBuilder m(14);
  m.input("X", {N, S, I}).input("lens", {N}, onnx::TensorProto::INT32).output("Y").output("Y_h");
  m.initializer("W", {D, H, I}, w).initializer("R", {D, H, H}, r).initializer("B", {D, 2 * H}, b);
  auto& n = m.node("RNN", {"X", "W", "R", "B", "lens"}, {"Y", "Y_h"}, "rnn");
  attr(n, "direction", std::string("bidirectional"));
  attr(n, "layout", int64_t{1});  // hidden_size comes from R
  const ConvertResult cr = convert_seq(m);
  const fb::Plan* plan = plan_of(cr);
  ASSERT_NE(plan, nullptr);
  const fb::RnnParams* p = only_step(plan, fb::OpFamily::Rnn)->params_as_RnnParams();
  EXPECT_EQ(p->direction(), fb::RnnDirection::Bidirectional);
  EXPECT_TRUE(p->batch_major());
  EXPECT_EQ(p->hidden_size(), H);
  EXPECT_EQ(p->activations()->size(), 2u);

  const std::vector<int32_t> lens = {4, 2};
  const auto out = run_plan(cr.plan, {bytes_of(x), bytes_of(lens)});
  ASSERT_EQ(out.size(), 2u);
  const std::vector<float> want = reference_rnn(x, w, r, b, lens, S, N, I, H, D, true, false);
  const std::vector<float> got = values_of<float>(out[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "Y[" << i << "]";
  // Y_h [N, D, H]: forwards the state at the last step run, backwards the state at t = 0.
  const std::vector<float> y_h = values_of<float>(out[1]);
  ASSERT_EQ(y_h.size(), static_cast<size_t>(N * D * H));
  for (int64_t nn = 0; nn < N; ++nn)
    for (int64_t j = 0; j < H; ++j) {
      const int64_t last = lens[nn] - 1;
      EXPECT_NEAR(y_h[(nn * D + 0) * H + j], want[((nn * S + last) * D + 0) * H + j], 1e-5);
      EXPECT_NEAR(y_h[(nn * D + 1) * H + j], want[((nn * S + 0) * D + 1) * H + j], 1e-5);
    }
}

TEST(SeqRnn, ReverseMatchesTheReference) {
  const int64_t S = 3, N = 1, I = 2, H = 4;
  const std::vector<float> w = random_floats(H * I, 21), r = random_floats(H * H, 22),
                           x = random_floats(S * N * I, 23);
  ModelBuilder m(14);
  m.input("X", {S, N, I}).output("Y");
  m.initializer("W", {1, H, I}, w).initializer("R", {1, H, H}, r);
  auto& n = m.node("RNN", {"X", "W", "R"}, {"Y"}, "rnn");
  attr(n, "direction", std::string("reverse"));
  attr(n, "hidden_size", H);
  const ConvertResult cr = convert_seq(m);
  const auto out = run_plan(cr.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  const std::vector<float> want =
      reference_rnn(x, w, r, std::vector<float>(2 * H, 0.f), {3}, S, N, I, H, 1, false, true);
  const std::vector<float> got = values_of<float>(out[0]);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5) << "Y[" << i << "]";
}

// One LSTM node 'lstm1' with X [2, 1, 3], hidden_size 4, and `edit` applied.
std::string lstm_error(const std::function<void(ModelBuilder&, onnx::NodeProto&)>& edit,
                       std::vector<int64_t> x_dims = {2, 1, 3}) {
  ModelBuilder m(14);
  m.input("X", x_dims).output("Y_h");
  m.random("W", {1, 16, 3}).random("R", {1, 16, 4});
  auto& n = m.node("LSTM", {"X", "W", "R"}, {"", "Y_h"}, "lstm1");
  attr(n, "hidden_size", int64_t{4});
  edit(m, n);
  return convert_error(m);
}

TEST(SeqRnn, BadAttributesNameTheNode) {
  auto set_int = [](const char* name, int64_t v) {
    return [=](ModelBuilder&, onnx::NodeProto& n) { attr(n, name, v); };
  };
  const struct {
    std::function<void(ModelBuilder&, onnx::NodeProto&)> edit;
    const char* mentions;
  } cases[] = {
      {[](ModelBuilder&, onnx::NodeProto& n) { attr(n, "direction", std::string("sideways")); },
       "unknown direction 'sideways'"},
      {set_int("layout", 2), "layout must be 0 or 1"},
      {set_int("input_forget", 3), "input_forget must be 0 or 1"},
      {[](ModelBuilder&, onnx::NodeProto& n) { attr(n, "clip", -1.f); }, "clip -1"},
      {[](ModelBuilder&, onnx::NodeProto& n) {
         n.mutable_attribute(0)->set_i(5);  // hidden_size 5 while W and R hold 4
       },
       "shape mismatch: W 'W' is [1,16,3], expected [1,20,3]"},
  };
  for (const auto& c : cases) {
    const std::string e = lstm_error(c.edit);
    EXPECT_THAT(e, HasSubstr("'lstm1' (LSTM)"));
    EXPECT_THAT(e, HasSubstr(c.mentions));
  }
}

TEST(SeqRnn, InputRankAndBiasShapeAreChecked) {
  // ONNX shape inference sees a rank-2 X first, and names the node too.
  const std::string rank = lstm_error([](ModelBuilder&, onnx::NodeProto&) {}, {2, 3});
  EXPECT_THAT(rank, HasSubstr("lstm1"));
  EXPECT_THAT(rank, HasSubstr("rank 3"));
  const std::string e = lstm_error([](ModelBuilder& m, onnx::NodeProto& n) {
    m.random("B", {1, 16});  // needs [1, 32]
    n.add_input("B");
  });
  EXPECT_THAT(e, HasSubstr("'lstm1' (LSTM): shape mismatch: B 'B' is [1,16], expected [1,32]"));
}

// ONNX's `activations` is a list of strings (imported as Attribute::Kind::kStrings): the
// functions and their alpha/beta land in the step.
TEST(SeqRnn, ActivationsAttribute) {
  ModelBuilder m(14);
  m.input("X", {2, 1, 3}).output("Y_h");
  m.random("W", {1, 9, 3}).random("R", {1, 9, 3});
  auto& n = m.node("GRU", {"X", "W", "R"}, {"", "Y_h"}, "gru1");
  attr(n, "hidden_size", int64_t{3});
  auto* acts = add_attr(n, "activations");
  acts->set_type(onnx::AttributeProto::STRINGS);
  acts->add_strings("hardsigmoid");  // any case, as onnxruntime
  acts->add_strings("LeakyRelu");
  auto* alpha = add_attr(n, "activation_alpha");
  alpha->set_type(onnx::AttributeProto::FLOATS);
  alpha->add_floats(0.3f);
  alpha->add_floats(0.05f);
  auto* beta = add_attr(n, "activation_beta");
  beta->set_type(onnx::AttributeProto::FLOATS);
  beta->add_floats(0.4f);
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const auto* acts_out = only_step(plan, fb::OpFamily::Rnn)->params_as_RnnParams()->activations();
  ASSERT_EQ(acts_out->size(), 2u);
  EXPECT_EQ(acts_out->Get(0)->kind(), fb::RnnActivationKind::HardSigmoid);
  EXPECT_FLOAT_EQ(acts_out->Get(0)->alpha(), 0.3f);
  EXPECT_FLOAT_EQ(acts_out->Get(0)->beta(), 0.4f);
  EXPECT_EQ(acts_out->Get(1)->kind(), fb::RnnActivationKind::LeakyRelu);
  EXPECT_FLOAT_EQ(acts_out->Get(1)->alpha(), 0.05f);
  // A name ONNX does not know is the model's mistake.
  acts->set_strings(1, "Swish");
  EXPECT_THAT(convert_error(m), HasSubstr("'gru1' (GRU): unknown activation 'Swish'"));
  acts->set_strings(1, "Tanh");
  acts->add_strings("Tanh");
  EXPECT_THAT(convert_error(m), HasSubstr("'activations' lists 3 functions, GRU needs 2"));
}

// The default list written out (as exporters do) is the same step as no list at all.
TEST(SeqRnn, DefaultActivationsWrittenOut) {
  const auto lstm = [](bool explicit_list) {
    ModelBuilder m(14);
    m.input("X", {2, 1, 3}).output("Y_h");
    m.random("W", {1, 8, 3}).random("R", {1, 8, 2});
    auto& n = m.node("LSTM", {"X", "W", "R"}, {"", "Y_h"}, "lstm1");
    attr(n, "hidden_size", int64_t{2});
    if (explicit_list) {
      auto* acts = add_attr(n, "activations");
      acts->set_type(onnx::AttributeProto::STRINGS);
      for (const char* f : {"Sigmoid", "Tanh", "Tanh"}) acts->add_strings(f);
    }
    return m;
  };
  const ConvertResult with = convert_seq(lstm(true)), without = convert_seq(lstm(false));
  const fb::Plan *a = plan_of(with), *b = plan_of(without);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const auto* acts_a = only_step(a, fb::OpFamily::Rnn)->params_as_RnnParams()->activations();
  const auto* acts_b = only_step(b, fb::OpFamily::Rnn)->params_as_RnnParams()->activations();
  ASSERT_EQ(acts_a->size(), 3u);
  ASSERT_EQ(acts_b->size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(acts_a->Get(i)->kind(), acts_b->Get(i)->kind()) << i;
    EXPECT_EQ(acts_a->Get(i)->alpha(), acts_b->Get(i)->alpha()) << i;
  }
  EXPECT_EQ(acts_a->Get(0)->kind(), fb::RnnActivationKind::Sigmoid);
  EXPECT_EQ(acts_a->Get(2)->kind(), fb::RnnActivationKind::Tanh);
}



TEST(SeqRnn, WorkspaceIsTheKernels) {
  for (int64_t H : {1, 7, 64}) {
    ModelBuilder m(14);
    m.input("X", {2, 1, 3}).output("Y_h");
    m.random("W", {1, 3 * H, 3}).random("R", {1, 3 * H, H});
    auto& n = m.node("GRU", {"X", "W", "R"}, {"", "Y_h"}, "gru");
    attr(n, "hidden_size", H);
    const ConvertResult r = convert_seq(m);
    const fb::Plan* plan = plan_of(r);
    ASSERT_NE(plan, nullptr);
    kernels::RnnParams k;
    k.cell = kernels::RnnCell::kGru;
    k.hidden_size = H;
    EXPECT_EQ(only_step(plan, fb::OpFamily::Rnn)->workspace_bytes(),
              static_cast<uint64_t>(kernels::cpu::rnn_workspace_bytes(k)))
        << "H " << H;
  }
}

// ---------------------------------------------------------------------------------- quantized

TEST(SeqQuant, QuantizeLinearPerAxisWithANegativeAxis) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 2}).output("q", onnx::TensorProto::INT8);
  m.initializer("scale", {3}, {0.5f, 1.f, 2.f});
  i8_initializer(m, "zp", {3}, {0, -3, 100});
  auto& n = m.node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}, "quant");
  attr(n, "axis", int64_t{-2});
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = only_step(plan, fb::OpFamily::Quantize);
  ASSERT_NE(s, nullptr);
  const fb::QuantizeParams* p = s->params_as_QuantizeParams();
  EXPECT_TRUE(p->per_axis());
  EXPECT_EQ(p->axis(), 1);
  EXPECT_TRUE(p->has_zero_point());
  EXPECT_EQ(plan->tensors()->Get(s->outputs()->Get(0))->dtype(), fb::DType::Int8);

  const std::vector<float> x = {0.25f,  0.75f, 1.5f,  2.5f,  3.f,  500.f,
                                -0.25f, -1.f,  -1.5f, -2.5f, -3.f, -500.f};
  const auto out = run_plan(r.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  // round half to even of x / scale, plus the channel's zero point, saturated to int8.
  EXPECT_THAT(values_of<int8_t>(out[0]),
              ElementsAre(0, 2, -1, -1, 102, 127, 0, -2, -5, -5, 98, -128));
}

TEST(SeqQuant, QuantizeWithoutZeroPointIsUInt8AndDequantizeInverts) {
  ModelBuilder m(13);
  m.input("x", {5}).output("q", onnx::TensorProto::UINT8).output("y");
  m.initializer("scale", {}, {0.1f});
  m.node("QuantizeLinear", {"x", "scale"}, {"q"}, "quant");
  m.node("DequantizeLinear", {"q", "scale"}, {"y"}, "dequant");
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const fb::Step* q = only_step(plan, fb::OpFamily::Quantize);
  const fb::Step* dq = only_step(plan, fb::OpFamily::Dequantize);
  ASSERT_TRUE(q && dq);
  EXPECT_FALSE(q->params_as_QuantizeParams()->has_zero_point());
  EXPECT_FALSE(q->params_as_QuantizeParams()->per_axis());
  EXPECT_EQ(q->inputs()->size(), 2u);
  EXPECT_EQ(plan->tensors()->Get(q->outputs()->Get(0))->dtype(), fb::DType::UInt8);
  const auto out = run_plan(r.plan, {bytes_of(std::vector<float>{-1.f, 0.f, 1.23f, 25.5f, 99.f})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_THAT(values_of<uint8_t>(out[0]), ElementsAre(0, 0, 12, 255, 255));
  const std::vector<float> y = values_of<float>(out[1]);
  ASSERT_EQ(y.size(), 5u);
  EXPECT_FLOAT_EQ(y[2], 12 * 0.1f);
  EXPECT_FLOAT_EQ(y[3], 255 * 0.1f);
}

TEST(SeqQuant, MistakesNameTheNode) {
  {  // per-axis before opset 13
    ModelBuilder m(10);
    m.input("x", {2, 3}).output("q", onnx::TensorProto::UINT8);
    m.initializer("scale", {3}, {1.f, 1.f, 1.f});
    m.node("QuantizeLinear", {"x", "scale"}, {"q"}, "q10");
    EXPECT_THAT(convert_error(m), HasSubstr("'q10' (QuantizeLinear): scale 'scale' [3] is "
                                            "per-axis, which QuantizeLinear takes from opset 13"));
  }
  {  // scale and zero point of different sizes
    ModelBuilder m(13);
    m.input("q", {2, 3}, onnx::TensorProto::UINT8).output("y");
    m.initializer("scale", {3}, {1.f, 1.f, 1.f});
    u8_initializer(m, "zp", {1}, {0});
    m.node("DequantizeLinear", {"q", "scale", "zp"}, {"y"}, "dq");
    EXPECT_THAT(convert_error(m), HasSubstr("'dq' (DequantizeLinear): shape mismatch"));
  }
  {  // per-axis extent that is not the axis'
    ModelBuilder m(13);
    m.input("x", {2, 3}).output("q", onnx::TensorProto::UINT8);
    m.initializer("scale", {2}, {1.f, 1.f});
    m.node("QuantizeLinear", {"x", "scale"}, {"q"}, "qa");
    EXPECT_THAT(convert_error(m), HasSubstr("'qa' (QuantizeLinear): shape mismatch: scale "
                                            "'scale' has 2 entries for axis 1 of [2,3]"));
  }
}

TEST(SeqQuant, Int32DequantizeIsUnsupported) {
  ModelBuilder m(13);
  m.input("q", {4}, onnx::TensorProto::INT32).output("y");
  m.initializer("scale", {}, {0.5f});
  m.node("DequantizeLinear", {"q", "scale"}, {"y"}, "dq32");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'dq32' (DequantizeLinear): input 'q' is int32 and computed at run "
                        "time (jetplan dequantizes int32 constants only)"));
}

// A QDQ model keeps its weights as int8 and its bias as int32 behind DequantizeLinear: those
// fold into float32 constants, so the Conv sees plain weights (and BatchNorm folding, fusion).
TEST(SeqQuant, DequantizeOfConstantsFolds) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 4, 4}).output("y");
  i8_initializer(m, "w_q", {3, 2, 1, 1}, {1, -2, 3, -4, 127, -128});
  m.initializer("w_scale", {3}, {0.5f, 0.25f, 2.f});
  i8_initializer(m, "w_zp", {3}, {0, 1, -1});
  typed_initializer(m, "b_q", onnx::TensorProto::INT32, {3}, std::vector<int32_t>{100, -7, 0});
  m.initializer("b_scale", {3}, {0.01f, 0.5f, 3.f});
  auto& dqw = m.node("DequantizeLinear", {"w_q", "w_scale", "w_zp"}, {"w"}, "dq_w");
  attr(dqw, "axis", int64_t{0});  // per output channel
  auto& dqb = m.node("DequantizeLinear", {"b_q", "b_scale"}, {"b"}, "dq_b");
  attr(dqb, "axis", int64_t{0});
  m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  EXPECT_THAT(step_ops(plan), ElementsAre(fb::OpFamily::Conv));
  const fb::Step* conv = plan->steps()->Get(0);
  ASSERT_EQ(conv->inputs()->size(), 3u);
  EXPECT_THAT(weight_values(plan, conv->inputs()->Get(1)),
              ElementsAre(0.5f, -1.f, 0.5f, -1.25f, 256.f, -254.f));
  EXPECT_THAT(weight_values(plan, conv->inputs()->Get(2)), ElementsAre(1.f, -3.5f, 0.f));
}

// Naive QLinearMatMul for uint8 operands, per-tensor a and y, per-column or per-tensor b.
std::vector<uint8_t> reference_qmatmul(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b,
                                       int64_t M, int64_t K, int64_t N, float a_scale, int a_zp,
                                       const std::vector<float>& b_scale,
                                       const std::vector<int>& b_zp, float y_scale, int y_zp) {
  std::vector<uint8_t> y(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      const size_t c = b_scale.size() == 1 ? 0 : n;
      int64_t acc = 0;
      for (int64_t k = 0; k < K; ++k) acc += (a[m * K + k] - a_zp) * (b[k * N + n] - b_zp[c]);
      const double v = std::nearbyint(acc * (double{a_scale} * b_scale[c] / y_scale)) + y_zp;
      y[m * N + n] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, v)));
    }
  return y;
}

TEST(SeqQLinear, MatMulVectorOperandGetsViewsAndAConstantZeroPointIsWidened) {
  const std::vector<uint8_t> b = {10, 200, 30, 40, 5, 60, 70, 8, 90, 100, 110, 0};  // [4, 3]
  ModelBuilder m(10);
  m.input("a", {4}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("a_scale", {}, {0.02f}).initializer("y_scale", {}, {0.05f});
  m.initializer("b_scale", {3}, {0.01f, 0.03f, 0.02f});
  u8_initializer(m, "a_zp", {}, {128});
  u8_initializer(m, "b_zp", {}, {50});  // per-tensor while b_scale is per column
  u8_initializer(m, "y_zp", {}, {100});
  u8_initializer(m, "b", {4, 3}, b);
  m.node("QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"},
         {"y"}, "qmm");
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  std::vector<fb::OpFamily> ops = step_ops(plan);
  EXPECT_THAT(ops,
              ElementsAre(fb::OpFamily::Copy, fb::OpFamily::QLinearMatMul, fb::OpFamily::Copy));
  const fb::Step* s = only_step(plan, fb::OpFamily::QLinearMatMul);
  ASSERT_NE(s, nullptr);
  EXPECT_THAT(tensor_shape(plan, s->inputs()->Get(0)), ElementsAre(1, 4));
  EXPECT_THAT(tensor_shape(plan, s->inputs()->Get(5)), ElementsAre(3));  // widened b_zp
  EXPECT_THAT(tensor_shape(plan, s->outputs()->Get(0)), ElementsAre(1, 3));

  const std::vector<uint8_t> a = {0, 255, 128, 77};
  const auto out = run_plan(r.plan, {bytes_of(a)});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0], reference_qmatmul(a, b, 1, 4, 3, 0.02f, 128, {0.01f, 0.03f, 0.02f},
                                      {50, 50, 50}, 0.05f, 100));
}

TEST(SeqQLinear, MatMulPartialBatchBroadcastIsUnsupported) {
  ModelBuilder m(10);
  m.input("a", {2, 1, 2, 4}, onnx::TensorProto::UINT8);
  m.input("b", {1, 3, 4, 3}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("s", {}, {0.1f});
  u8_initializer(m, "zp", {}, {0});
  m.node("QLinearMatMul", {"a", "s", "zp", "b", "s", "zp", "s", "zp"}, {"y"}, "qmm");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'qmm' (QLinearMatMul): batch dims [2,1] broadcast partially to [2,3]"));
}

TEST(SeqQLinear, ConvPerChannelWithBiasMatchesTheReference) {
  // x [1, 2, 5, 5] uint8, w [3, 2, 3, 3] int8 per channel, pads 1, stride 2 -> y [1, 3, 3, 3].
  std::vector<uint8_t> x(50);
  std::vector<int8_t> w(54);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>((i * 37) % 256);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>((i * 53) % 256 - 128);
  const std::vector<int32_t> bias = {1000, -2000, 0};
  const std::vector<float> w_scale = {0.01f, 0.002f, 0.005f};
  ModelBuilder m(10);
  m.input("x", {1, 2, 5, 5}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("x_scale", {}, {0.05f}).initializer("y_scale", {}, {0.5f});
  m.initializer("w_scale", {3}, w_scale);
  u8_initializer(m, "x_zp", {}, {7});
  i8_initializer(m, "w_zp", {}, {-1});
  u8_initializer(m, "y_zp", {}, {120});
  i8_initializer(m, "w", {3, 2, 3, 3}, w);
  typed_initializer(m, "bias", onnx::TensorProto::INT32, {3}, bias);
  auto& n = m.node("QLinearConv",
                   {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"},
                   {"y"}, "qconv");
  attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  attr(n, "strides", std::vector<int64_t>{2, 2});
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  const fb::Step* s = only_step(plan, fb::OpFamily::QLinearConv);
  ASSERT_NE(s, nullptr);
  const fb::QLinearConvParams* p = s->params_as_QLinearConvParams();
  EXPECT_TRUE(p->has_bias());
  EXPECT_THAT(std::vector<int64_t>(p->pad_begin()->begin(), p->pad_begin()->end()),
              ElementsAre(1, 1));
  EXPECT_EQ(s->inputs()->size(), 9u);
  EXPECT_THAT(tensor_shape(plan, s->inputs()->Get(5)), ElementsAre(3));  // widened w_zp

  const auto out = run_plan(r.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<uint8_t> want(27);
  for (int oc = 0; oc < 3; ++oc)
    for (int oy = 0; oy < 3; ++oy)
      for (int ox = 0; ox < 3; ++ox) {
        int64_t acc = bias[oc];
        for (int ic = 0; ic < 2; ++ic)
          for (int ky = 0; ky < 3; ++ky)
            for (int kx = 0; kx < 3; ++kx) {
              const int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
              if (iy < 0 || iy >= 5 || ix < 0 || ix >= 5) continue;
              acc += (x[(ic * 5 + iy) * 5 + ix] - 7) * (w[((oc * 2 + ic) * 3 + ky) * 3 + kx] + 1);
            }
        const double v =
            std::nearbyint(acc * (double{0.05f} * double{w_scale[oc]} / double{0.5f})) + 120;
        want[(oc * 3 + oy) * 3 + ox] = static_cast<uint8_t>(std::min(255.0, std::max(0.0, v)));
      }
  EXPECT_EQ(out[0], want);
}

TEST(SeqQLinear, ConvRunTimeZeroPointWithPerChannelScaleIsUnsupported) {
  ModelBuilder m(10);
  m.input("x", {1, 1, 4, 4}, onnx::TensorProto::UINT8);
  m.input("w_zp", {}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::UINT8);
  m.initializer("s", {}, {0.1f}).initializer("w_scale", {2}, {0.1f, 0.2f});
  u8_initializer(m, "zp", {}, {0});
  u8_initializer(m, "w", {2, 1, 1, 1}, {1, 2});
  m.node("QLinearConv", {"x", "s", "zp", "w", "w_scale", "w_zp", "s", "zp"}, {"y"}, "qc");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'qc' (QLinearConv): 'w_zp' is per-tensor and computed at run time"));
}

// ------------------------------------------------------------------------ integer products

TEST(SeqInteger, MatMulIntegerRunsAsDequantizeGemmCast) {
  // A [2, 3, 4] int8 at run time, B [4, 5] uint8 constant with per-column zero points.
  std::vector<uint8_t> b(20);
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>((i * 71 + 13) % 256);
  const std::vector<uint8_t> b_zp = {0, 128, 255, 7, 64};
  ModelBuilder m(10);
  m.input("a", {2, 3, 4}, onnx::TensorProto::INT8).output("y", onnx::TensorProto::INT32);
  i8_initializer(m, "a_zp", {}, {-3});
  u8_initializer(m, "b", {4, 5}, b);
  u8_initializer(m, "b_zp", {5}, b_zp);
  m.node("MatMulInteger", {"a", "b", "a_zp", "b_zp"}, {"y"}, "mmi");
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  // B and its zero points fold into one float32 constant: no step dequantizes them.
  EXPECT_THAT(step_ops(plan),
              ElementsAre(fb::OpFamily::Dequantize, fb::OpFamily::Gemm, fb::OpFamily::Cast));
  const fb::Step* gemm = only_step(plan, fb::OpFamily::Gemm);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(plan->tensors()->Get(gemm->inputs()->Get(1))->storage(), fb::Storage::Weight);
  EXPECT_EQ(plan->tensors()->Get(gemm->inputs()->Get(1))->dtype(), fb::DType::Float32);

  std::vector<int8_t> a(24);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<int8_t>(i * 29 % 256 - 128);
  const auto out = run_plan(r.plan, {bytes_of(a)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int32_t> want(30);
  for (int bi = 0; bi < 2; ++bi)
    for (int i = 0; i < 3; ++i)
      for (int n = 0; n < 5; ++n) {
        int32_t acc = 0;
        for (int k = 0; k < 4; ++k) acc += (a[(bi * 3 + i) * 4 + k] + 3) * (b[k * 5 + n] - b_zp[n]);
        want[(bi * 3 + i) * 5 + n] = acc;
      }
  EXPECT_EQ(values_of<int32_t>(out[0]), want);
}

TEST(SeqInteger, SumsBeyondFloatPrecisionAreRefused) {
  ModelBuilder m(10);
  m.input("a", {2, 300}, onnx::TensorProto::UINT8);
  m.input("b", {300, 2}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::INT32);
  m.node("MatMulInteger", {"a", "b"}, {"y"}, "big");
  EXPECT_THAT(convert_error(m),
              HasSubstr("'big' (MatMulInteger): its int32 sums may reach 19507500, beyond "
                        "float32's exact integers"));
}

TEST(SeqInteger, ConvIntegerPerChannelZeroPoints) {
  // x [1, 1, 4, 4] uint8 at run time, w [2, 1, 2, 2] int8 with per-channel zero points, pads 1.
  const std::vector<int8_t> w = {1, -2, 3, -4, 127, -128, 0, 5};
  ModelBuilder m(10);
  m.input("x", {1, 1, 4, 4}, onnx::TensorProto::UINT8).output("y", onnx::TensorProto::INT32);
  i8_initializer(m, "w", {2, 1, 2, 2}, w);
  u8_initializer(m, "x_zp", {}, {9});
  i8_initializer(m, "w_zp", {2}, {1, -1});
  auto& n = m.node("ConvInteger", {"x", "w", "x_zp", "w_zp"}, {"y"}, "ci");
  attr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
  const ConvertResult r = convert_seq(m);
  const fb::Plan* plan = plan_of(r);
  ASSERT_NE(plan, nullptr);
  EXPECT_THAT(step_ops(plan),
              ElementsAre(fb::OpFamily::Dequantize, fb::OpFamily::Conv, fb::OpFamily::Cast));
  std::vector<uint8_t> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>(i * 17);
  const auto out = run_plan(r.plan, {bytes_of(x)});
  ASSERT_EQ(out.size(), 1u);
  std::vector<int32_t> want(2 * 5 * 5);
  const int w_zp[2] = {1, -1};
  for (int oc = 0; oc < 2; ++oc)
    for (int oy = 0; oy < 5; ++oy)
      for (int ox = 0; ox < 5; ++ox) {
        int32_t acc = 0;  // padding is x_zp: it adds nothing
        for (int ky = 0; ky < 2; ++ky)
          for (int kx = 0; kx < 2; ++kx) {
            const int iy = oy - 1 + ky, ix = ox - 1 + kx;
            if (iy < 0 || iy >= 4 || ix < 0 || ix >= 4) continue;
            acc += (x[iy * 4 + ix] - 9) * (w[(oc * 2 + ky) * 2 + kx] - w_zp[oc]);
          }
        want[(oc * 5 + oy) * 5 + ox] = acc;
      }
  EXPECT_EQ(values_of<int32_t>(out[0]), want);
}

// ------------------------------------------------------------------ hostile plans at load

struct Tensor {
  std::vector<int64_t> shape;
  fb::DType dtype = fb::DType::Float32;
};

using ParamsFn = std::function<std::pair<fb::StepParams, flatbuffers::Offset<void>>(
    flatbuffers::FlatBufferBuilder&)>;

struct HostileStep {
  fb::OpFamily op;
  ParamsFn params;
  std::vector<Tensor> inputs, outputs;
  uint64_t workspace_bytes = 0;
};

int64_t dtype_bytes(fb::DType t) { return kernels::dtype_bytes(static_cast<kernels::DType>(t)); }

// A plan of one step whose inputs are graph inputs and outputs graph outputs; load's verdict
// and message.
std::pair<jp_status, std::string> load_step(const HostileStep& h) {
  flatbuffers::FlatBufferBuilder b;
  std::vector<flatbuffers::Offset<fb::Tensor>> tensors;
  std::vector<flatbuffers::Offset<fb::BindingDesc>> ins, outs;
  std::vector<uint32_t> in_ids, out_ids;
  auto add = [&](const Tensor& t, bool output, size_t index) {
    int64_t bytes = dtype_bytes(t.dtype);
    for (int64_t d : t.shape) bytes *= d;
    const std::string name = (output ? "out" : "in") + std::to_string(index);
    const uint32_t id = static_cast<uint32_t>(tensors.size());
    tensors.push_back(fb::CreateTensorDirect(b, name.c_str(), &t.shape, t.dtype, fb::Layout::Any,
                                             fb::Storage::Binding, 0, static_cast<uint64_t>(bytes),
                                             static_cast<int32_t>(index)));
    (output ? outs : ins).push_back(fb::CreateBindingDescDirect(b, name.c_str(), id));
    (output ? out_ids : in_ids).push_back(id);
  };
  for (size_t i = 0; i < h.inputs.size(); ++i) add(h.inputs[i], false, i);
  for (size_t i = 0; i < h.outputs.size(); ++i) add(h.outputs[i], true, i);
  const auto [type, params] = h.params(b);
  const fb::LaunchConfig launch{};
  const auto step = fb::CreateStepDirect(b, "hostile", h.op, type, params, &in_ids, &out_ids, "",
                                         &launch, 0, h.workspace_bytes);
  const std::vector<flatbuffers::Offset<fb::Step>> steps = {step};
  const auto target = fb::CreateTargetDirect(b, "cpu", fb::Backend::CPU, 0);
  const uint64_t arena = (h.workspace_bytes + 255) / 256 * 256;
  const auto plan =
      fb::CreatePlanDirect(b, JP_SCHEMA_VERSION, target, &ins, &outs, &tensors, &steps, arena, 256);
  fb::FinishPlanBuffer(b, plan);
  jp_plan* loaded = nullptr;
  const jp_status status =
      jp_plan_load_buffer(b.GetBufferPointer(), b.GetSize(), JP_LOAD_COPY, &loaded);
  const std::string message = status == JP_OK ? "" : jp_last_error();
  if (status == JP_OK) {
    // A plan that loads must also run: the kernel stays inside every tensor it was given.
    jp_context* ctx = nullptr;
    EXPECT_EQ(jp_context_create(loaded, nullptr, &ctx), JP_OK);
    EXPECT_EQ(jp_context_run(ctx), JP_OK);
    jp_context_destroy(ctx);
  }
  jp_plan_destroy(loaded);
  return {status, message};
}

struct RnnSpec {
  fb::RnnCell cell = fb::RnnCell::Lstm;
  fb::RnnDirection direction = fb::RnnDirection::Forward;
  int64_t hidden_size = 4;
  std::vector<fb::RnnActivation> activations = {{fb::RnnActivationKind::Sigmoid, 0.f, 0.f},
                                                {fb::RnnActivationKind::Tanh, 0.f, 0.f},
                                                {fb::RnnActivationKind::Tanh, 0.f, 0.f}};
  float clip = 0.f;
  bool has_clip = false, has_bias = false, has_sequence_lens = false, has_y_c = false;
  bool no_table = false;
};

ParamsFn rnn_params(const RnnSpec& r) {
  return [r](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    if (r.no_table) return {fb::StepParams::RnnParams, 0};
    const auto p = fb::CreateRnnParamsDirect(
        b, r.cell, r.direction, false, r.hidden_size, &r.activations, r.clip, r.has_clip, false,
        false, r.has_bias, r.has_sequence_lens, false, false, false, false, true, r.has_y_c);
    return {fb::StepParams::RnnParams, p.Union()};
  };
}

// LSTM, X [S=2, N=1, I=3], H = 4: inputs X, W, R; output Y_h.
HostileStep lstm_step(const RnnSpec& spec = {}) {
  kernels::RnnParams k;
  k.hidden_size = 4;
  return {fb::OpFamily::Rnn,
          rnn_params(spec),
          {{{2, 1, 3}}, {{1, 16, 3}}, {{1, 16, 4}}},
          {{{1, 1, 4}}},
          static_cast<uint64_t>(kernels::cpu::rnn_workspace_bytes(k))};
}

void expect_refused(const HostileStep& h, const char* mentions, const std::string& what) {
  const auto [status, message] = load_step(h);
  EXPECT_NE(status, JP_OK) << what;
  EXPECT_THAT(message, HasSubstr("'hostile'")) << what;
  EXPECT_THAT(message, HasSubstr(mentions)) << what;
}

TEST(SeqLoad, ValidHandBuiltStepsLoadAndRun) {
  EXPECT_EQ(load_step(lstm_step()).first, JP_OK) << jp_last_error();
}

TEST(SeqLoad, HostileRnnStepsAreRefused) {
  {
    RnnSpec s;
    s.hidden_size = 5;  // W [1, 16, 3] holds 4 gates of 4
    expect_refused(lstm_step(s), "W 'in1' must be [1,20,3]", "hidden_size vs W");
  }
  {
    RnnSpec s;
    s.hidden_size = 1000;  // larger than W's rows
    expect_refused(lstm_step(s), "hidden_size 1000 does not fit W", "huge hidden_size");
  }
  {
    HostileStep h = lstm_step();
    h.inputs[2] = {{1, 16, 5}};
    expect_refused(h, "R 'in2' must be [1,16,4]", "R");
  }
  {
    HostileStep h = lstm_step();
    h.outputs[0] = {{1, 2, 4}};
    expect_refused(h, "Y_h 'out0' must be [1,1,4]", "Y_h");
  }
  {
    HostileStep h = lstm_step();
    h.workspace_bytes = 64;
    expect_refused(h, "workspace of 64 bytes, the recurrence needs 320", "workspace");
  }
  {
    RnnSpec s;
    s.activations.pop_back();
    expect_refused(lstm_step(s), "2 activations, expected 3", "activation count");
  }
  {
    RnnSpec s;
    s.activations[1] = fb::RnnActivation(static_cast<fb::RnnActivationKind>(99), 0.f, 0.f);
    expect_refused(lstm_step(s), "unknown recurrent activation 99", "activation kind");
  }
  {
    RnnSpec s;
    s.cell = static_cast<fb::RnnCell>(7);
    expect_refused(lstm_step(s), "unknown recurrent cell 7", "cell");
  }
  {
    RnnSpec s;
    s.direction = static_cast<fb::RnnDirection>(3);
    expect_refused(lstm_step(s), "unknown direction 3", "direction");
  }
  {
    RnnSpec s;
    s.cell = fb::RnnCell::Gru;
    s.has_y_c = true;
    expect_refused(lstm_step(s), "belong to LSTM only", "Y_c on a GRU");
  }
  {
    RnnSpec s;
    s.has_bias = true;  // but no B among the inputs
    expect_refused(lstm_step(s), "has 3 inputs and 1 outputs; its params say 4 and 1", "arity");
  }
  {
    RnnSpec s;
    s.has_sequence_lens = true;
    HostileStep h = lstm_step(s);
    h.inputs.push_back({{1}, fb::DType::Float32});
    expect_refused(h, "sequence_lens 'in3' is Float32, expected Int32", "lens dtype");
  }
  {
    HostileStep h = lstm_step();
    h.inputs[1].dtype = fb::DType::Float16;
    h.inputs[1].shape = {1, 16, 3};
    expect_refused(h, "W 'in1' is Float16, expected Float32", "W dtype");
  }
  {
    RnnSpec s;
    s.has_clip = true;
    s.clip = std::nanf("");
    expect_refused(lstm_step(s), "clip must be a finite non-negative number", "clip");
  }
  {
    RnnSpec s;
    s.no_table = true;
    expect_refused(lstm_step(s), "has no params table", "no table");
  }
}

ParamsFn quantize_params(int32_t axis, bool per_axis, bool has_zp) {
  return [=](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    return {fb::StepParams::QuantizeParams,
            fb::CreateQuantizeParams(b, axis, per_axis, has_zp).Union()};
  };
}

// Quantize x [2, 3] per axis 1 into uint8.
HostileStep quantize_step(int32_t axis = 1) {
  return {fb::OpFamily::Quantize,
          quantize_params(axis, true, true),
          {{{2, 3}}, {{3}}, {{3}, fb::DType::UInt8}},
          {{{2, 3}, fb::DType::UInt8}}};
}

TEST(SeqLoad, HostileQuantizeStepsAreRefused) {
  EXPECT_EQ(load_step(quantize_step()).first, JP_OK) << jp_last_error();
  EXPECT_EQ(load_step(quantize_step(-1)).first, JP_OK) << jp_last_error();
  expect_refused(quantize_step(2), "the quantization axis is out of range", "axis 2");
  expect_refused(quantize_step(-3), "the quantization axis is out of range", "axis -3");
  {
    HostileStep h = quantize_step(0);  // 2 channels on axis 0, 3 scales
    expect_refused(h, "scale 'in1' has 3 elements, expected 2", "scale count");
  }
  {
    HostileStep h = quantize_step();
    h.inputs[2].dtype = fb::DType::Int8;
    expect_refused(h, "zero point 'in2' is Int8, expected UInt8", "zp dtype");
  }
  {
    HostileStep h = quantize_step();
    h.outputs[0].dtype = fb::DType::Int32;
    expect_refused(h, "output 'out0' is Int32, expected Int8 or UInt8", "output dtype");
  }
  {
    HostileStep h = quantize_step();
    h.outputs[0].shape = {3, 2};
    expect_refused(h, "input and output shapes differ", "shape");
  }
  {
    HostileStep h = quantize_step();
    h.op = fb::OpFamily::Dequantize;  // x float32 is no quantized input
    expect_refused(h, "output 'out0' is UInt8, expected Float32", "dequantize dtypes");
  }
  {
    HostileStep h = quantize_step();
    h.params = quantize_params(1, false, true);  // per-tensor with 3 scales
    expect_refused(h, "scale 'in1' has 3 elements, expected 1", "per-tensor count");
  }
}

ParamsFn qmatmul_params() {
  return [](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    return {fb::StepParams::QLinearMatMulParams, fb::CreateQLinearMatMulParams(b).Union()};
  };
}

// a [2, 4] x b [4, 3], b per column.
HostileStep qmatmul_step() {
  const fb::DType u8 = fb::DType::UInt8;
  return {fb::OpFamily::QLinearMatMul,
          qmatmul_params(),
          {{{2, 4}, u8}, {{1}}, {{1}, u8}, {{4, 3}, u8}, {{3}}, {{3}, u8}, {{1}}, {{1}, u8}},
          {{{2, 3}, u8}}};
}

TEST(SeqLoad, HostileQLinearMatMulStepsAreRefused) {
  EXPECT_EQ(load_step(qmatmul_step()).first, JP_OK) << jp_last_error();
  {
    HostileStep h = qmatmul_step();
    h.inputs[3].shape = {5, 3};
    expect_refused(h, "inner dimensions of A and B differ", "K");
  }
  {
    HostileStep h = qmatmul_step();
    h.outputs[0].shape = {2, 4};
    expect_refused(h, "output is not [.., M, N]", "y");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs[1].shape = {2};  // per row, but its zero point is per tensor
    expect_refused(h, "A scale 'in1' and zero point 'in2' need 1 or 2 elements", "a_scale");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs[4].shape = {4};
    h.inputs[5].shape = {4};
    expect_refused(h, "B scale 'in4' and zero point 'in5' need 1 or 3 elements", "b_scale");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs[6].shape = {3};
    h.inputs[7].shape = {3};
    expect_refused(h, "output scale 'in6' and zero point 'in7' need 1 or 1", "y_scale");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs[5].dtype = fb::DType::Int8;
    expect_refused(h, "B zero point 'in5' is Int8, expected UInt8", "b_zp dtype");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs[0].shape = {2, 2, 4};  // batch 2 against an output of batch 3
    h.outputs[0].shape = {3, 2, 3};
    expect_refused(h, "batch dims of A or B neither match the output nor are all 1", "batch");
  }
  {
    HostileStep h = qmatmul_step();
    h.inputs.pop_back();
    expect_refused(h, "has 7 inputs and 1 outputs; its params say 8 and 1", "arity");
  }
}

struct QConvSpec {
  int64_t groups = 1;
  std::vector<int64_t> kernel = {3, 3}, stride = {2, 2}, pads = {1, 1};
  bool has_bias = true;
};

ParamsFn qconv_params(const QConvSpec& c) {
  return [c](flatbuffers::FlatBufferBuilder& b)
             -> std::pair<fb::StepParams, flatbuffers::Offset<void>> {
    return {fb::StepParams::QLinearConvParams,
            fb::CreateQLinearConvParamsDirect(b, c.groups, &c.kernel, &c.stride, nullptr, &c.pads,
                                              &c.pads, c.has_bias)
                .Union()};
  };
}

// x [1, 2, 5, 5] uint8, w [3, 2, 3, 3] int8 per channel, pads 1, stride 2, y [1, 3, 3, 3].
HostileStep qconv_step(const QConvSpec& c = {}) {
  const fb::DType u8 = fb::DType::UInt8, i8 = fb::DType::Int8;
  return {fb::OpFamily::QLinearConv,
          qconv_params(c),
          {{{1, 2, 5, 5}, u8},
           {{1}},
           {{1}, u8},
           {{3, 2, 3, 3}, i8},
           {{3}},
           {{3}, i8},
           {{1}},
           {{1}, u8},
           {{3}, fb::DType::Int32}},
          {{{1, 3, 3, 3}, u8}}};
}

TEST(SeqLoad, HostileQLinearConvStepsAreRefused) {
  EXPECT_EQ(load_step(qconv_step()).first, JP_OK) << jp_last_error();
  {
    HostileStep h = qconv_step();
    h.outputs[0].shape = {1, 3, 4, 4};
    expect_refused(h, "spatial dim 0 is 4, the window gives 3", "output size");
  }
  {
    HostileStep h = qconv_step();
    h.inputs[8].dtype = fb::DType::Float32;
    expect_refused(h, "bias 'in8' is Float32, expected Int32", "bias dtype");
  }
  {
    HostileStep h = qconv_step();
    h.inputs[8].shape = {2};
    expect_refused(h, "bias 'in8' has 2 elements, expected 3", "bias count");
  }
  {
    QConvSpec c;
    c.groups = 0;
    expect_refused(qconv_step(c), "weight channels do not match", "groups 0");
  }
  {
    QConvSpec c;
    c.groups = 2;  // 3 output channels do not split in 2 groups
    HostileStep h = qconv_step(c);
    h.inputs[3].shape = {3, 1, 3, 3};
    expect_refused(h, "weight channels do not match", "groups 2");
  }
  {
    QConvSpec c;
    c.kernel = {2, 2};
    expect_refused(qconv_step(c), "weight and kernel size differ", "kernel");
  }
  {
    QConvSpec c;
    c.stride = {0, 2};
    expect_refused(qconv_step(c), "stride[0] = 0 is out of range", "stride");
  }
  {
    QConvSpec c;
    c.pads = {-1, 1};
    expect_refused(qconv_step(c), "pad_begin[0] = -1 is out of range", "pads");
  }
  {
    QConvSpec c;
    c.kernel = {3, 3, 3, 3};
    expect_refused(qconv_step(c), "kernel must have 1 to 3 spatial dims", "rank");
  }
  {
    HostileStep h = qconv_step();
    h.inputs[1].shape = {2};
    h.inputs[2].shape = {2};
    expect_refused(h, "input scale 'in1' and zero point 'in2' need 1 or 1", "x_scale");
  }
  {
    HostileStep h = qconv_step();
    h.inputs[5].shape = {2};
    expect_refused(h, "weight scale 'in4' and zero point 'in5' need 1 or 3", "w_zp");
  }
  {
    QConvSpec c;
    c.has_bias = false;  // yet 9 inputs
    expect_refused(qconv_step(c), "has 9 inputs and 1 outputs; its params say 8 and 1", "arity");
  }
}

}  // namespace
}  // namespace jetplan::converter::testing
