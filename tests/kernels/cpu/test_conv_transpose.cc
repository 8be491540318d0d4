// cpu::conv_transpose against the ONNX backend test data (test_convtranspose,
// test_convtranspose_pads, test_convtranspose_dilations), a direct scatter formulation (every
// input element adds its kernel footprint into a zeroed output; the kernel gathers instead), and
// the adjoint identity <conv(x), y> = <x, convT(y)> with the existing cpu::conv on the very same
// weight buffer.

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/kernels.h"
#include "tests/kernels/kernel_test_util.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

// A transposed convolution in ONNX's terms; out() applies ONNX's output-shape formula.
struct ConvTShape : WindowShape {
  int64_t batch = 1, in_channels = 1, out_channels = 1, groups = 1;
  Shape output_padding;

  Shape out() const {
    Shape o(in.size());
    for (size_t d = 0; d < in.size(); ++d)
      o[d] = stride[d] * (in[d] - 1) + output_padding[d] + (kernel[d] - 1) * dilation[d] + 1 -
             pad_begin[d] - pad_end[d];
    return o;
  }
  int64_t x_count() const { return batch * in_channels * volume(in); }
  int64_t w_count() const { return in_channels * (out_channels / groups) * volume(kernel); }
  int64_t y_count() const { return batch * out_channels * volume(out()); }
};

ConvTShape convt(Shape in, Shape kernel, Shape stride, Shape dilation, Shape pad_begin,
                 Shape pad_end, Shape output_padding) {
  ConvTShape s;
  static_cast<WindowShape&>(s) = {in, kernel, stride, dilation, pad_begin, pad_end};
  s.output_padding = output_padding;
  return s;
}

ConvTransposeParams convt_params(const ConvTShape& s, bool bias, bool residual, Activation act) {
  return conv_like_params<ConvTransposeParams>(s, bias, residual, act);
}

Output run_convt(const ConvTShape& s, const std::vector<float>& x, const std::vector<float>& w,
                 const float* bias, const float* residual, Activation act = {}) {
  Output y(s.y_count());
  cpu::conv_transpose(convt_params(s, bias != nullptr, residual != nullptr, act), x.data(),
                      w.data(), bias, residual, y.data());
  return y;
}

// Scatter: each (input element, kernel tap) adds into the output position it lands on.
std::vector<double> scatter_reference(const ConvTShape& s, const std::vector<float>& x,
                                      const std::vector<float>& w, const float* bias,
                                      const float* residual, Activation act) {
  const Shape out = s.out();
  const int64_t in_vol = volume(s.in), out_vol = volume(out), k_vol = volume(s.kernel);
  const int64_t in_per_group = s.in_channels / s.groups, out_per_group = s.out_channels / s.groups;
  std::vector<double> y(size_t(s.y_count()), 0.0);
  for (int64_t n = 0; n < s.batch; ++n)
    for (int64_t ic = 0; ic < s.in_channels; ++ic)
      for (int64_t i = 0; i < in_vol; ++i)
        for (int64_t oc_g = 0; oc_g < out_per_group; ++oc_g)
          for (int64_t k = 0; k < k_vol; ++k) {
            const Shape ix = unravel(i, s.in), kx = unravel(k, s.kernel);
            Shape ox(s.in.size());
            bool inside = true;
            for (size_t d = 0; d < s.in.size(); ++d) {
              ox[d] = ix[d] * s.stride[d] - s.pad_begin[d] + kx[d] * s.dilation[d];
              inside = inside && ox[d] >= 0 && ox[d] < out[d];
            }
            if (!inside) continue;
            const int64_t oc = ic / in_per_group * out_per_group + oc_g;
            y[size_t((n * s.out_channels + oc) * out_vol + ravel(ox, out))] +=
                double{x[size_t((n * s.in_channels + ic) * in_vol + i)]} *
                w[size_t((ic * out_per_group + oc_g) * k_vol + k)];
          }
  for (int64_t i = 0; i < s.y_count(); ++i) {
    double v = y[size_t(i)];
    if (bias) v += bias[i / out_vol % s.out_channels];
    if (residual) v += residual[i];
    y[size_t(i)] = act.kind == ActivationKind::kRelu ? std::max(v, 0.0)
                   : act.kind == ActivationKind::kSigmoid ? 1 / (1 + std::exp(-v))
                                                           : v;
  }
  return y;
}

std::vector<float> range(int64_t n, float first) {
  std::vector<float> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(first + float(i));
  return v;
}

TEST(ConvTranspose, OnnxDataDefault) {
  ConvTShape s = convt({3, 3}, {3, 3}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {0, 0});
  s.out_channels = 2;
  const std::vector<double> plane = {0, 1,  3,  3,  2,  3, 8,  15, 12, 7,  9,  21, 36,
                                     27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  EXPECT_TRUE(all_close(run_convt(s, range(9, 0), std::vector<float>(18, 1.f), nullptr, nullptr),
                        want, kExact));
}

TEST(ConvTranspose, OnnxDataStridesAndPads) {
  ConvTShape s = convt({3, 3}, {3, 3}, {3, 2}, {1, 1}, {1, 2}, {1, 2}, {0, 0});
  s.out_channels = 2;
  ASSERT_EQ(s.out(), (Shape{7, 3}));
  const std::vector<double> plane = {1, 1, 3, 1, 1, 3, 7, 4,  9, 7, 4,
                                     9, 7, 4, 9, 13, 7, 15, 13, 7, 15};
  std::vector<double> want = plane;
  want.insert(want.end(), plane.begin(), plane.end());
  EXPECT_TRUE(all_close(run_convt(s, range(9, 0), std::vector<float>(18, 1.f), nullptr, nullptr),
                        want, kExact));
}

TEST(ConvTranspose, OnnxDataDilations) {
  const ConvTShape s = convt({3, 3}, {2, 2}, {1, 1}, {2, 2}, {0, 0}, {0, 0}, {0, 0});
  const std::vector<float> x = {3, 8, 1, 9, 5, 7, 3, 2, 6}, w = {7, 2, 1, 9};
  EXPECT_TRUE(all_close(run_convt(s, x, w, nullptr, nullptr),
                        {21, 56, 13, 16, 2,  63, 35, 67, 10, 14, 24, 22, 76,
                         76, 21, 9,  5,  88, 45, 63, 3,  2,  33, 18, 54},
                        kExact));
}

TEST(ConvTranspose, Hand1DStrideOutputPaddingAndEpilogue) {
  // Stride 2, kernel {1, 10}: each input lands on 2i (x1) and 2i + 1 (x10). output_padding 1
  // adds position 6, which only the bias reaches.
  const ConvTShape s = convt({3}, {2}, {2}, {1}, {0}, {0}, {1});
  ASSERT_EQ(s.out(), (Shape{7}));
  const std::vector<float> x = {1, 2, 3}, w = {1, 10}, bias = {0.5f};
  EXPECT_TRUE(all_close(run_convt(s, x, w, bias.data(), nullptr), {1.5, 10.5, 2.5, 20.5, 3.5, 30.5, 0.5},
                        kExact));
  // relu(convT + bias + residual): the residual comes before the activation.
  const std::vector<float> residual = {-2, 0, -3, 0, -4, -31, 1};
  EXPECT_TRUE(all_close(run_convt(s, x, w, bias.data(), residual.data(), {ActivationKind::kRelu, 0, 0}),
                        {0, 10.5, 0, 20.5, 0, 0, 1.5}, kExact));
}

struct MatrixCase {
  int rank;
  int64_t stride, dilation, in_channels, out_channels, groups, batch;
};

TEST(ConvTranspose, MatrixAgainstScatter) {
  SEEDED_RNG(rng);
  const MatrixCase cases[] = {
      {1, 1, 1, 3, 2, 1, 1}, {1, 3, 2, 4, 6, 2, 2}, {2, 2, 1, 3, 5, 1, 1}, {2, 1, 2, 6, 4, 2, 2},
      {2, 2, 2, 4, 4, 4, 1}, {3, 2, 1, 2, 3, 1, 1}, {3, 1, 2, 4, 2, 2, 2}, {2, 3, 1, 5, 10, 5, 1},
  };
  static const int64_t kIn[3] = {4, 3, 5}, kKernel[3] = {3, 2, 3};
  for (const MatrixCase& c : cases)
    for (int epilogue = 0; epilogue < 3; ++epilogue) {
      SCOPED_TRACE("rank " + std::to_string(c.rank) + " stride " + std::to_string(c.stride) +
                   " dilation " + std::to_string(c.dilation) + " groups " +
                   std::to_string(c.groups) + " epilogue " + std::to_string(epilogue));
      ConvTShape s;
      s.batch = c.batch;
      s.in_channels = c.in_channels;
      s.out_channels = c.out_channels;
      s.groups = c.groups;
      for (int d = 0; d < c.rank; ++d) {
        s.in.push_back(kIn[d]);
        s.kernel.push_back(kKernel[d]);
        s.stride.push_back(c.stride);
        s.dilation.push_back(c.dilation);
        s.pad_begin.push_back(rng.integer(0, 1));
        s.pad_end.push_back(rng.integer(0, 2 - s.pad_begin.back()));
        s.output_padding.push_back(rng.integer(0, std::max(c.stride, c.dilation) - 1));
      }
      const std::vector<float> x = rng.uniform(s.x_count(), -1.f, 1.f);
      const std::vector<float> w = rng.uniform(s.w_count(), -1.f, 1.f);
      const std::vector<float> bias = rng.uniform(s.out_channels, -1.f, 1.f);
      const std::vector<float> residual = rng.uniform(s.y_count(), -1.f, 1.f);
      const float* b = epilogue >= 1 ? bias.data() : nullptr;
      const float* r = epilogue == 2 ? residual.data() : nullptr;
      const Activation act = epilogue == 2 ? Activation{ActivationKind::kSigmoid, 0, 0}
                                           : Activation{};
      EXPECT_TRUE(all_close(run_convt(s, x, w, b, r, act), scatter_reference(s, x, w, b, r, act),
                            {1e-5, 1e-5}));
    }
}

// channels_last (the upsampling form: x [N, H, W, Cin], w [KH, KW, Cout, Cin], y [N, OH, OW,
// Cout]) is the NCHW twin's result on the same numbers permuted, exactly (same sums in the same
// order); every other form computes nothing (prepare refuses it).
TEST(ConvTranspose, ChannelsLastUpsamplingIsTheNchwResultPermuted) {
  SEEDED_RNG(rng);
  struct Case {
    int64_t batch, cin, cout, h, w, kh, kw;
  };
  const Case cases[] = {{1, 3, 5, 4, 3, 2, 2}, {2, 8, 3, 3, 5, 3, 1}, {3, 1, 2, 1, 1, 2, 3}};
  for (const Case& c : cases) {
    ConvTransposeParams p;
    p.spatial_rank = 2;
    p.batch = c.batch;
    p.in_channels = c.cin;
    p.out_channels = c.cout;
    p.in_size[0] = c.h, p.in_size[1] = c.w;
    p.kernel[0] = p.stride[0] = c.kh, p.kernel[1] = p.stride[1] = c.kw;
    p.out_size[0] = c.h * c.kh, p.out_size[1] = c.w * c.kw;
    p.has_bias = p.has_residual = true;
    p.act = Activation{ActivationKind::kLeakyRelu, 0.1f, 0.f};
    const int64_t in_plane = c.h * c.w, kvol = c.kh * c.kw, out_plane = in_plane * kvol;
    const std::vector<float> x = rng.uniform(c.batch * c.cin * in_plane, -1.f, 1.f);
    const std::vector<float> w = rng.uniform(c.cin * c.cout * kvol, -1.f, 1.f);
    const std::vector<float> bias = rng.uniform(c.cout, -1.f, 1.f);
    const std::vector<float> res = rng.uniform(c.batch * c.cout * out_plane, -1.f, 1.f);
    std::vector<float> want(res.size()), got(res.size(), std::nanf("")), wl(w.size());
    cpu::conv_transpose(p, x.data(), w.data(), bias.data(), res.data(), want.data());
    for (int64_t i = 0; i < c.cin; ++i)
      for (int64_t o = 0; o < c.cout; ++o)
        for (int64_t k = 0; k < kvol; ++k)
          wl[(k * c.cout + o) * c.cin + i] = w[(i * c.cout + o) * kvol + k];
    // [N, C, P] <-> [N, P, C]
    auto last = [](const std::vector<float>& v, int64_t n, int64_t ch, int64_t px) {
      std::vector<float> out(v.size());
      for (int64_t b = 0; b < n; ++b)
        for (int64_t k = 0; k < ch; ++k)
          for (int64_t i = 0; i < px; ++i) out[(b * px + i) * ch + k] = v[(b * ch + k) * px + i];
      return out;
    };
    p.channels_last = true;
    cpu::conv_transpose(p, last(x, c.batch, c.cin, in_plane).data(), wl.data(), bias.data(),
                        last(res, c.batch, c.cout, out_plane).data(), got.data());
    EXPECT_EQ(got, last(want, c.batch, c.cout, out_plane)) << c.cin << "x" << c.cout;
    // Into channels [2, 2 + Cout) of a Concat's y of Cout + 3 channels (written in place):
    // each pixel's Cout values the dense result's, the other channels untouched.
    ConvTransposeParams slice = p;
    slice.y_channels = c.cout + 3;
    slice.y_channel_offset = 2;
    std::vector<float> y(size_t(c.batch * out_plane * slice.y_channels), 7.f);
    cpu::conv_transpose(slice, last(x, c.batch, c.cin, in_plane).data(), wl.data(), bias.data(),
                        last(res, c.batch, c.cout, out_plane).data(), y.data());
    for (int64_t px = 0; px < c.batch * out_plane; ++px)
      for (int64_t k = 0; k < slice.y_channels; ++k) {
        const float v = y[size_t(px * slice.y_channels + k)];
        if (k >= 2 && k < 2 + c.cout) ASSERT_EQ(v, got[size_t(px * c.cout + k - 2)]) << px;
        else ASSERT_EQ(v, 7.f) << px << " " << k;
      }
  }
  ConvTransposeParams padded;
  padded.channels_last = true;
  padded.kernel[0] = padded.kernel[1] = 3;  // kernel 3, stride 1: not the upsampling form
  padded.in_channels = padded.out_channels = 1;
  padded.in_size[0] = padded.in_size[1] = 1;
  padded.out_size[0] = padded.out_size[1] = 3;
  std::vector<float> y(9, 7.f);
  const float one = 1.f;
  const std::vector<float> w9(9, 1.f);
  cpu::conv_transpose(padded, &one, w9.data(), nullptr, nullptr, y.data());
  EXPECT_EQ(y, std::vector<float>(9, 7.f));
}

// conv maps [cin] x [in] to [cout] x [out]; convT with the same weights, strides, dilations and
// pad_begin maps [cout] x [out] back to [cin] x [in], and is its adjoint.
TEST(ConvTranspose, AdjointOfConv) {
  SEEDED_RNG(rng);
  for (int rank = 1; rank <= 3; ++rank)
    for (const auto& [stride, dilation, groups] :
         {std::tuple<int64_t, int64_t, int64_t>{1, 1, 1}, {2, 1, 2}, {3, 2, 1}, {2, 2, 3}}) {
      SCOPED_TRACE("rank " + std::to_string(rank) + " stride " + std::to_string(stride) +
                   " dilation " + std::to_string(dilation) + " groups " + std::to_string(groups));
      const int64_t cin = 2 * groups, cout = 3 * groups, batch = 2;
      ConvParams cp;
      cp.spatial_rank = rank;
      set_conv_channels(cp, batch, cin, cout, groups);
      ConvTransposeParams tp;
      tp.spatial_rank = rank;
      set_conv_channels(tp, batch, cout, cin, groups);
      int64_t in_vol = 1, out_vol = 1, k_vol = 1;
      for (int d = 0; d < rank; ++d) {
        const int64_t in = 5 + d + stride, k = 2 + d % 2, pb = d % 2, pe = (d + 1) % 2;
        cp.in_size[d] = tp.out_size[d] = in;
        cp.kernel[d] = tp.kernel[d] = k;
        cp.stride[d] = tp.stride[d] = stride;
        cp.dilation[d] = tp.dilation[d] = dilation;
        cp.pad_begin[d] = tp.pad_begin[d] = pb;
        cp.out_size[d] = tp.in_size[d] = (in + pb + pe - dilation * (k - 1) - 1) / stride + 1;
        in_vol *= in;
        out_vol *= cp.out_size[d];
        k_vol *= k;
      }
      const std::vector<float> x = rng.uniform(batch * cin * in_vol, -1.f, 1.f);
      const std::vector<float> y = rng.uniform(batch * cout * out_vol, -1.f, 1.f);
      const std::vector<float> w = rng.uniform(cout * (cin / groups) * k_vol, -1.f, 1.f);
      Output conv_x(batch * cout * out_vol), convt_y(batch * cin * in_vol);
      cpu::conv(cp, x.data(), w.data(), nullptr, nullptr, conv_x.data());
      cpu::conv_transpose(tp, y.data(), w.data(), nullptr, nullptr, convt_y.data());
      ASSERT_TRUE(conv_x.guard_intact() && convt_y.guard_intact());
      double lhs = 0, rhs = 0, scale = 0;
      for (size_t i = 0; i < y.size(); ++i) {
        ASSERT_FALSE(std::isnan(conv_x[int64_t(i)]));
        lhs += double{conv_x[int64_t(i)]} * y[i];
        scale += std::fabs(double{conv_x[int64_t(i)]} * y[i]);
      }
      for (size_t i = 0; i < x.size(); ++i) {
        ASSERT_FALSE(std::isnan(convt_y[int64_t(i)]));
        rhs += double{convt_y[int64_t(i)]} * x[i];
      }
      EXPECT_GT(scale, 1.0);  // the identity is not trivially 0 = 0
      EXPECT_NEAR(lhs, rhs, 1e-6 * scale) << "lhs " << lhs << " rhs " << rhs;
    }
}

}  // namespace
}  // namespace jetplan::kernels
