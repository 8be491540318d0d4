// DFT (opsets 17 and 20) and STFT (opset 17) as graphs of other ops: their rows are the Gemm
// family's (gemm.cc), whose MatMul steps take the transforms against constant cosine and sine
// matrices (STFT's window folded into them where it is constant, DFT's length and scale too);
// STFT's frames are one Gather of constant indices, DFT's axis is moved last and back by
// Transposes, and the real and imaginary parts are joined by a Concat. Every step runs on the
// CPU and GPU backends.
#include <algorithm>
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

constexpr double kPi = 3.14159265358979323846;

// The constant [rows, bins] matrices of cos(2 pi k n / N) and sin(2 pi k n / N), times scale and
// the row's weight (none: 1).
void dft_matrices(int64_t rows, int64_t bins, int64_t n, double scale, const std::vector<double>& weight,
                  std::vector<float>* cosm, std::vector<float>* sinm) {
  cosm->assign(static_cast<size_t>(rows * bins), 0.f);
  sinm->assign(cosm->size(), 0.f);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t k = 0; k < bins; ++k) {
      const double t = 2.0 * kPi * static_cast<double>((i * k) % n) / static_cast<double>(n);
      const double w = scale * (weight.empty() ? 1.0 : weight[static_cast<size_t>(i)]);
      (*cosm)[static_cast<size_t>(i * bins + k)] = static_cast<float>(w * std::cos(t));
      (*sinm)[static_cast<size_t>(i * bins + k)] = static_cast<float>(w * std::sin(t));
    }
}

// re + i im = (xr + i xi) (cos -+ i sin) summed by MatMuls over the last dim of xr and xi (xi
// -1: a real signal): forward (e^-i) or inverse (e^+i), into Concat's output `to` as
// [.., bins, 2] after `back` (a Transpose's perm of re and im, or empty).
void complex_matmul(OnnxNodes& b, int xr, int xi, const Shape& mat, const std::vector<float>& cosm,
                    const std::vector<float>& sinm, bool inverse, const std::vector<int64_t>& back,
                    int64_t rank, int to) {
  std::vector<float> neg(sinm.size());
  for (size_t i = 0; i < sinm.size(); ++i) neg[i] = -sinm[i];
  const int c = b.floats("cos", mat, cosm);
  // forward: re = xr cos + xi sin, im = xi cos - xr sin; inverse: the sines' signs flip.
  const int s_re = b.floats("sin_real", mat, inverse ? neg : sinm);
  const int s_im = b.floats("sin_imag", mat, inverse ? sinm : neg);
  int re = b.add("MatMul", "real_cos", {xr, c});
  int im = b.add("MatMul", "real_sin", {xr, s_im});
  if (xi >= 0) {
    re = b.add("Add", "real_sum", {re, b.add("MatMul", "imag_sin", {xi, s_re})});
    im = b.add("Add", "imag_sum", {im, b.add("MatMul", "imag_cos", {xi, c})});
  }
  using A = OnnxNodes;
  if (!back.empty()) {
    re = b.add("Transpose", "real_back", {re}, {{"perm", A::ints_attr(back)}});
    im = b.add("Transpose", "imag_back", {im}, {{"perm", A::ints_attr(back)}});
  }
  const int last = b.ints("pair_axis", {rank});
  b.add("Concat", "pairs",
        {b.add("Unsqueeze", "real_pair", {re, last}), b.add("Unsqueeze", "imag_pair", {im, last})},
        {{"axis", A::int_attr(rank)}}, to);
}

}  // namespace

// input [B, n_1 .., n_k, 1 or 2] (real or complex), dft_length (optional, constant), axis (opset
// 20: input 2, default -2; opset 17: the attribute, default 1) -> the input's shape with the
// axis' extent N (dft_length, else the input's: the signal truncated or zero-padded to it) or, with
// onesided, N / 2 + 1, and a last dim of 2: sum over n of x[n] e^(-+2 pi i k n / N), the inverse
// divided by N.
std::string decompose_dft(Graph& g, const Node& node, std::vector<Node>* out) {
  if (std::string r = float_inputs(g, node, {0}); !r.empty()) return r;
  const Shape x = input(g, node, 0).shape;
  const int64_t r = static_cast<int64_t>(x.size());
  if (r < 2 || (x.back() != 1 && x.back() != 2))
    return cat("the input must be [.., 1 or 2] of rank 2 or more (", shape_str(x), ")");
  int64_t axis = attr_int(node, "axis", 1);
  if (g.opset >= 20) {
    axis = -2;
    if (has_input(node, 2))
      if (std::string e = constant_int(g, node, 2, "axis", &axis); !e.empty()) return e;
  }
  const auto bad = [&](const std::string& what) {
    fail("node ", node_label(node), ": ", what, " (input ", shape_str(x), ")");
  };
  if (axis < -r || axis > r - 2 || axis == -1) bad(cat("axis ", axis, " is not a signal dim"));
  if (axis < 0) axis += r;
  const int64_t len = x[static_cast<size_t>(axis)];
  int64_t n = len;
  if (has_input(node, 1))
    if (std::string e = constant_int(g, node, 1, "dft_length", &n); !e.empty()) return e;
  const bool inverse = attr_int(node, "inverse", 0) != 0;
  const bool onesided = attr_int(node, "onesided", 0) != 0;
  if (n < 1) bad(cat("dft_length ", n, " must be positive"));
  if (onesided && (inverse || x.back() == 2)) bad("onesided needs a real signal and a forward DFT");
  const int64_t bins = onesided ? n / 2 + 1 : n, rows = std::min(len, n);
  if (len * bins > (int64_t{1} << 24)) bad(cat("a ", len, "-point input to ", bins, " bins is more than jetplan unrolls"));
  std::vector<float> cosm, sinm;
  dft_matrices(rows, bins, n, inverse ? 1.0 / static_cast<double>(n) : 1.0, {}, &cosm, &sinm);
  // Rows past N (a truncated signal) are zeros; a zero-padded one has no rows for the padding.
  cosm.resize(static_cast<size_t>(len * bins), 0.f);
  sinm.resize(cosm.size(), 0.f);

  OnnxNodes b(g, node, out);
  using A = OnnxNodes;
  // The signal dims (all but the last), with the axis moved last where it is not.
  const int64_t sr = r - 1;
  std::vector<int64_t> perm, back;
  if (axis != sr - 1) {
    for (int64_t d = 0; d < sr; ++d)
      if (d != axis) perm.push_back(d);
    perm.push_back(axis);
    back.assign(static_cast<size_t>(sr), 0);
    for (int64_t d = 0; d < sr; ++d) back[static_cast<size_t>(perm[static_cast<size_t>(d)])] = d;
  }
  const auto part = [&](const std::string& name, int64_t which) {
    const int sel = b.constant(name + "_part", DataType::kInt64, {}, write_ints(DataType::kInt64, {which}));
    int p = b.add("Gather", name, {node.inputs[0], sel}, {{"axis", A::int_attr(sr)}});
    if (!perm.empty()) p = b.add("Transpose", name + "_axis_last", {p}, {{"perm", A::ints_attr(perm)}});
    return p;
  };
  const int xr = part("real", 0), xi = x.back() == 2 ? part("imag", 1) : -1;
  complex_matmul(b, xr, xi, {len, bins}, cosm, sinm, inverse, back, sr, node.outputs[0]);
  return "";
}

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
  const bool window_constant = has_window && input(g, node, 2).is_constant;
  std::vector<float> cosm, sinm;
  dft_matrices(n, bins, n, 1.0, window_constant ? read_doubles(input(g, node, 2)) : std::vector<double>{},
               &cosm, &sinm);
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
  const int xr = frames_of("real", 0), xi = complex ? frames_of("imag", 1) : -1;
  complex_matmul(b, xr, xi, {n, bins}, cosm, sinm, false, {}, 3, node.outputs[0]);
  return "";
}

}  // namespace jetplan::converter::ops
