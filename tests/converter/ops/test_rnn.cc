// RNN, LSTM and GRU through the converter and the runtime (ops/rnn.cc). Converted plans are
// checked against the plan contract and loaded (and, where the wiring of inputs and outputs
// matters, run) in process against references written here; load/ holds the hostile plans.
#include "tests/converter/util/quantized_util.h"

namespace jetplan::converter::testing {
namespace {

// ---------------------------------------------------------------------------------- recurrent

// Input X `x_dims` and a one-layer `op` named `name` (GRU: 3 gates, LSTM: 4) of hidden size h
// reading it, its W and R random for an input size of 3, writing `outputs`; the node, for more
// attributes.
onnx::NodeProto& recurrent_node(ModelBuilder& m, const char* op, int64_t h,
                                const std::vector<std::string>& outputs, const char* name,
                                const std::vector<int64_t>& x_dims = {2, 1, 3}) {
  const int64_t rows = (std::string(op) == "GRU" ? 3 : 4) * h;
  m.input("X", x_dims);
  m.random("W", {1, rows, 3}).random("R", {1, rows, h});
  auto& n = m.node(op, {"X", "W", "R"}, outputs, name);
  attr(n, "hidden_size", h);
  return n;
}

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
  const ConvertResult r = convert_and_load(full_lstm());
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
  const ConvertResult r = convert_and_load(full_lstm());
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
  m.output("Y_h");
  auto& n = recurrent_node(m, "GRU", 4, {"Y", "Y_h"}, "gru");
  attr(n, "linear_before_reset", int64_t{1});
  const auto& [r, plan, s] = convert_to_step(m, fb::OpFamily::Rnn);
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
  const ConvertResult cr = convert_and_load(m);
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
  const ConvertResult cr = convert_and_load(m);
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
  m.output("Y_h");
  auto& n = recurrent_node(m, "LSTM", 4, {"", "Y_h"}, "lstm1", x_dims);
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
  m.output("Y_h");
  auto& n = recurrent_node(m, "GRU", 3, {"", "Y_h"}, "gru1");
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
  const ConvertResult r = convert_and_load(m);
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
    m.output("Y_h");
    auto& n = recurrent_node(m, "LSTM", 2, {"", "Y_h"}, "lstm1");
    if (explicit_list) {
      auto* acts = add_attr(n, "activations");
      acts->set_type(onnx::AttributeProto::STRINGS);
      for (const char* f : {"Sigmoid", "Tanh", "Tanh"}) acts->add_strings(f);
    }
    return m;
  };
  const ConvertResult with = convert_and_load(lstm(true)), without = convert_and_load(lstm(false));
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
    m.output("Y_h");
    recurrent_node(m, "GRU", H, {"", "Y_h"}, "gru");
    const ConvertResult r = convert_and_load(m);
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

}  // namespace
}  // namespace jetplan::converter::testing
