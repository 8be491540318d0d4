// Contract rule of Rnn (schemas/plan.fbs RnnParams): ONNX RNN, LSTM and GRU, their inputs and
// outputs those the params flag present, in ONNX order.
#include "tests/contract/step_contract.h"

#include <utility>

namespace jetplan::converter::testing::contract {

// With G gates and A activations per direction: X [S, N, I] ([N, S, I] batch-major),
// W [D, G H, I], R [D, G H, H], B [D, 2 G H], sequence_lens [N] int32,
// initial_h/initial_c/Y_h/Y_c [D, N, H] ([N, D, H]), P [D, 3 H], Y [S, D, N, H] ([N, S, D, H]);
// float32 throughout; a workspace.
void contract_rnn(StepContract& c) {
  const auto* p = c.step->params_as_RnnParams();
  if (!p) return c.bad("step ", c.name, " lacks RnnParams");
  const auto& in = c.in;
  const bool lstm = p->cell() == fb::RnnCell::Lstm, gru = p->cell() == fb::RnnCell::Gru;
  const int64_t G = lstm ? 4 : gru ? 3 : 1, A = lstm ? 3 : gru ? 2 : 1;
  const int64_t D = p->direction() == fb::RnnDirection::Bidirectional ? 2 : 1;
  const size_t n_in = 3u + p->has_bias() + p->has_sequence_lens() + p->has_initial_h() +
                      p->has_initial_c() + p->has_peepholes();
  const size_t n_out = 0u + p->has_y() + p->has_y_h() + p->has_y_c();
  if (in.size() != n_in || c.step->outputs()->size() != n_out || n_out == 0)
    return c.bad("step ", c.name, ": rnn has ", in.size(), " inputs and ",
                 c.step->outputs()->size(), " outputs, its flags say ", n_in, " and ", n_out);
  if (!lstm && (p->has_initial_c() || p->has_peepholes() || p->has_y_c()))
    return c.bad("step ", c.name, ": rnn initial_c, P or Y_c outside LSTM");
  const Shape& x = in[0];
  if (x.size() != 3) return c.bad("step ", c.name, ": rnn X rank ", x.size());
  const bool bm = p->batch_major();
  const int64_t S = bm ? x[1] : x[0], N = bm ? x[0] : x[1], I = x[2];
  const int64_t H = p->hidden_size();
  const Shape state = bm ? Shape{N, D, H} : Shape{D, N, H};
  std::vector<std::pair<const char*, Shape>> want_in = {{"W", {D, G * H, I}},
                                                        {"R", {D, G * H, H}}};
  if (p->has_bias()) want_in.push_back({"B", {D, 2 * G * H}});
  if (p->has_sequence_lens()) want_in.push_back({"sequence_lens", {N}});
  if (p->has_initial_h()) want_in.push_back({"initial_h", state});
  if (p->has_initial_c()) want_in.push_back({"initial_c", state});
  if (p->has_peepholes()) want_in.push_back({"P", {D, 3 * H}});
  for (size_t i = 0; i < want_in.size(); ++i)
    c.expect(in[i + 1] == want_in[i].second, std::string("rnn ") + want_in[i].first + " " +
                                                 str(in[i + 1]) + ", expected " +
                                                 str(want_in[i].second));
  std::vector<std::pair<const char*, Shape>> want_out;
  if (p->has_y()) want_out.push_back({"Y", bm ? Shape{N, S, D, H} : Shape{S, D, N, H}});
  if (p->has_y_h()) want_out.push_back({"Y_h", state});
  if (p->has_y_c()) want_out.push_back({"Y_c", state});
  for (size_t i = 0; i < want_out.size(); ++i) {
    const Shape got = c.shape(c.step->outputs()->Get(static_cast<uint32_t>(i)));
    c.expect(got == want_out[i].second, std::string("rnn ") + want_out[i].first + " " + str(got) +
                                            ", expected " + str(want_out[i].second));
    c.expect(c.dtype_of(static_cast<uint32_t>(i)) == fb::DType::Float32, "rnn output dtype");
  }
  for (size_t i = 0; i < in.size(); ++i) {
    const bool lens = p->has_sequence_lens() && i == 3u + p->has_bias();
    c.expect(c.in_dtype(static_cast<uint32_t>(i)) ==
                 (lens ? fb::DType::Int32 : fb::DType::Float32),
             "rnn input dtype");
  }
  c.expect(p->activations() && p->activations()->size() == static_cast<uint32_t>(D * A),
           "rnn activations: " + std::to_string(D * A) + " expected");
  c.expect(c.step->workspace_bytes() > 0, "rnn workspace");
}

}  // namespace jetplan::converter::testing::contract
