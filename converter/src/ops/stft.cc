// STFT (opset 17) as a graph of other ops: its row is the Gemm family's (gemm.cc), whose MatMul
// steps take each frame's DFT against constant cosine and sine matrices (the window folded into
// them where it is constant); the frames are one Gather of constant indices, the real and
// imaginary parts a Concat. Every step runs on the CPU and GPU backends.
#include <cmath>
#include <string>
#include <vector>

#include "converter/src/ir/error.h"
#include "converter/src/ops/decompose.h"
#include "converter/src/ops/op_helpers.h"

namespace jetplan::converter::ops {

namespace {

// A constant integer scalar input's value, or the reason it is not one.
std::string constant_int(const Graph& g, const Node& node, size_t i, const char* what,
                         int64_t* out) {
  const Value& v = input(g, node, i);
  if (!v.is_constant) return run_time_reason(what);
  if ((v.dtype != DataType::kInt64 && v.dtype != DataType::kInt32) || shape_count(v.shape) != 1)
    return cat(what, " must be one int32 or int64");
  *out = read_ints(v)[0];
  return "";
}

}  // namespace

// signal [B, L, 1] (real) or [B, L, 2] (complex), frame_step, window [N] (optional), frame_length
// (optional, else the window's length) -> [B, frames, bins, 2] with frames = (L - N) / step + 1
// and bins = N / 2 + 1 (onesided, a real signal) or N: frame f's DFT, sum over n of
// x[f step + n] w[n] e^(-2 pi i k n / N).
std::string decompose_stft(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0, 2}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  if (x.size() != 3 || (x[2] != 1 && x[2] != 2))
    return cat("the signal must be [batch, length, 1 or 2] (", shape_str(x), ")");
  const bool complex = x[2] == 2;
  int64_t step = 0, n = 0;
  if (std::string r = constant_int(g, node, 1, "frame_step", &step); !r.empty()) return r;
  const bool has_window = has_input(node, 2);
  if (has_input(node, 3)) {
    if (std::string r = constant_int(g, node, 3, "frame_length", &n); !r.empty()) return r;
  } else if (has_window) {
    const Shape& w = input(g, node, 2).shape;
    n = w.size() == 1 ? w[0] : 0;
  }
  const auto bad = [&](const std::string& what) {
    fail("node ", node_label(node), ": ", what, " (signal ", shape_str(x), ")");
  };
  if (!has_input(node, 3) && !has_window) bad("STFT needs a frame_length or a window");
  if (step < 1) bad(cat("frame_step ", step, " must be positive"));
  if (n < 1 || n > x[1]) bad(cat("the frame length ", n, " must be 1 to the signal's length"));
  if (has_window && input(g, node, 2).shape != Shape{n})
    bad(cat("the window ", shape_str(input(g, node, 2).shape), " must be [", n, "]"));
  const bool onesided = attr_int(node, "onesided", 1) != 0;
  if (onesided && complex) bad("onesided needs a real signal");
  const int64_t frames = (x[1] - n) / step + 1, bins = onesided ? n / 2 + 1 : n;
  if (frames * n > (int64_t{1} << 26) || n * bins > (int64_t{1} << 24))
    bad(cat(frames, " frames of ", n, " samples are more than jetplan unrolls"));

  // The window, where constant, scales the matrices' rows; otherwise the frames at run time.
  std::vector<double> w(static_cast<size_t>(n), 1.0);
  const bool window_constant = has_window && input(g, node, 2).is_constant;
  if (window_constant) w = read_doubles(input(g, node, 2));
  std::vector<float> cosm(static_cast<size_t>(n * bins)), sinm(cosm.size());
  const double pi = 3.14159265358979323846;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < bins; ++k) {
      const double t = 2.0 * pi * static_cast<double>((i * k) % n) / static_cast<double>(n);
      cosm[static_cast<size_t>(i * bins + k)] = static_cast<float>(w[size_t(i)] * std::cos(t));
      sinm[static_cast<size_t>(i * bins + k)] = static_cast<float>(w[size_t(i)] * std::sin(t));
    }
  std::vector<int64_t> index(static_cast<size_t>(frames * n));
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t i = 0; i < n; ++i) index[static_cast<size_t>(f * n + i)] = f * step + i;

  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  const int idx = b.constant("frame_index", DataType::kInt64, {frames, n},
                             write_ints(DataType::kInt64, index));
  // The frames [B, frames, N] of one part ([B, L] of the signal's last dim `part`).
  const auto frames_of = [&](const std::string& name, int64_t part) {
    const int sel = b.constant(name + "_part", DataType::kInt64, {}, write_ints(DataType::kInt64, {part}));
    const int sig = b.add("Gather", name + "_signal", {node.inputs[0], sel}, {{"axis", A::int_attr(2)}});
    int fr = b.add("Gather", name + "_frames", {sig, idx}, {{"axis", A::int_attr(1)}});
    if (has_window && !window_constant) fr = b.add("Mul", name + "_windowed", {fr, node.inputs[2]});
    return fr;
  };
  std::vector<float> neg_sin(sinm.size());
  for (size_t i = 0; i < sinm.size(); ++i) neg_sin[i] = -sinm[i];
  const int c = b.floats("cos", {n, bins}, cosm), ns = b.floats("neg_sin", {n, bins}, neg_sin);
  // x (cos - i sin): real x cos, imaginary -x sin; a complex signal (xr + i xi) adds xi sin to
  // the real part and xi cos to the imaginary one.
  const int xr = frames_of("real", 0);
  int re = b.add("MatMul", "real_cos", {xr, c});
  int im = b.add("MatMul", "real_neg_sin", {xr, ns});
  if (complex) {
    const int xi = frames_of("imag", 1);
    re = b.add("Add", "real_sum", {re, b.add("MatMul", "imag_sin", {xi, b.floats("sin", {n, bins}, sinm)})});
    im = b.add("Add", "imag_sum", {im, b.add("MatMul", "imag_cos", {xi, c})});
  }
  const int last = b.ints("pair_axis", {3});
  b.add("Concat", "pairs",
        {b.add("Unsqueeze", "real_pair", {re, last}), b.add("Unsqueeze", "imag_pair", {im, last})},
        {{"axis", A::int_attr(3)}}, node.outputs[0]);
  return "";
}

}  // namespace jetplan::converter::ops
