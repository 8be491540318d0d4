// The self-tests of the shared kernel test helpers (kernel_test_util.h, onnx_node_data.h): a
// comparison that passes a NaN, an unwritten element or an overrun would make every kernel test
// vacuous.

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/kernels/kernel_test_util.h"
#include "tests/kernels/onnx_node_data.h"

namespace jetplan::kernels {
namespace {

using namespace test_util;

TEST(CompareHelpers, RejectNaNMismatchPoisonAndOverrun) {
  Output y(3);
  EXPECT_FALSE(all_close(y, {1, 2, 3}, {1, 1}));  // never written: poison is NaN
  y.data()[0] = 1.f;
  y.data()[1] = 2.f;
  y.data()[2] = 3.5f;
  EXPECT_TRUE(all_close(y, {1, 2, 3.5}, kExact));
  EXPECT_FALSE(all_close(y, {1, 2, 3}, {1e-3, 1e-3}));
  EXPECT_TRUE(all_close(y, {1, 2, 3}, {0.2, 0.0}));
  EXPECT_FALSE(all_close(y, {1, 2, NAN}, {1, 1}));
  EXPECT_FALSE(all_close(y, {1, 2}, {1, 1}));
  y.data()[2] = INFINITY;
  EXPECT_FALSE(all_close(y, {1, 2, 3}, {1, 1}));
  EXPECT_TRUE(all_close(y, {1, 2, INFINITY}, kExact));
  y.data()[3] = 0.f;  // first guard element
  EXPECT_FALSE(all_close(y, {1, 2, INFINITY}, kExact));

  ByteOutput b(2, 0xff);
  EXPECT_FALSE(b.equals({1, 2}));
  b.data()[0] = 1;
  b.data()[1] = 2;
  EXPECT_TRUE(b.equals({1, 2}));
  b.data()[2] = 0;
  EXPECT_FALSE(b.equals({1, 2}));
}

TEST(NnCompareHelpers, RejectPoisonMismatchAndOverrun) {
  IndexOutput y(2);
  EXPECT_FALSE(all_equal(y, {0, 0}));
  y.data()[0] = 3;
  y.data()[1] = 4;
  EXPECT_TRUE(all_equal(y, {3, 4}));
  EXPECT_FALSE(all_equal(y, {3, 5}));
  EXPECT_FALSE(all_equal(y, {3}));
  y.data()[2] = 0;
  EXPECT_FALSE(all_equal(y, {3, 4}));
  Output f(1);
  EXPECT_FALSE(all_close(f, {0}, {1, 1}));
  f.data()[0] = NAN;
  EXPECT_FALSE(all_close(f, {NAN}, {1, 1}));
  Workspace ws(12);
  EXPECT_TRUE(ws.guard_intact());
  static_cast<int64_t*>(ws.data())[2] = 0;
  EXPECT_FALSE(ws.guard_intact());
}

TEST(RnnCompareHelper, RejectsPoisonNaNAndOverrun) {
  Output y(2);
  EXPECT_FALSE(all_close(y, {0, 0}, {1, 1}));
  y.data()[0] = 1.f;
  y.data()[1] = 2.f;
  EXPECT_TRUE(all_close(y, {1, 2}, kExact));
  EXPECT_FALSE(all_close(y, {1, 2.01}, {1e-3, 0}));
  EXPECT_FALSE(all_close(y, {1, NAN}, {1, 1}));
  y.data()[2] = 0.f;
  EXPECT_FALSE(all_close(y, {1, 2}, kExact));
}

TEST(CompareHelpers, WorkspaceOfDoublesIsNaNAndGuarded) {
  Workspace ws(20, kNaNWord);
  const auto* words = static_cast<const double*>(ws.data());
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(words[i]));
  EXPECT_TRUE(ws.guard_intact());
  static_cast<double*>(ws.data())[3] = NAN;  // a NaN, but not the poison: still an overrun
  EXPECT_FALSE(ws.guard_intact());
}

// --------------------------------------------------------------------- ONNX TensorProto reader

std::string varint(uint64_t v) {
  std::string s;
  for (; v >= 0x80; v >>= 7) s += char(0x80 | (v & 0x7f));
  return s + char(v);
}
std::string field(int number, int wire) { return varint(uint64_t(number) << 3 | uint64_t(wire)); }
std::string bytes_field(int number, const std::string& payload) {
  return field(number, 2) + varint(payload.size()) + payload;
}
std::string float_bytes(const std::vector<float>& v) {
  std::string s(v.size() * 4, '\0');
  std::memcpy(&s[0], v.data(), s.size());
  return s;
}

TEST(OnnxNodeData, ReadsTheTensorProtoFields) {
  const std::vector<float> want = {1.5f, -2.f, 0.f, 1e-3f, 300.f, -7.25f};
  // dims 2 (not packed) and 3 (packed), data_type, name, raw_data; an unknown field 13 skipped.
  const std::string raw = field(1, 0) + varint(2) + bytes_field(1, varint(3)) + field(2, 0) +
                          varint(kOnnxFloat) + bytes_field(8, "X") + field(13, 0) + varint(300) +
                          bytes_field(9, float_bytes(want));
  OnnxTensor t;
  ASSERT_TRUE(parse_tensor(raw, t));
  EXPECT_EQ(t.name, "X");
  EXPECT_EQ(t.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(element_count(t), 6);
  EXPECT_EQ(values<float>(t, kOnnxFloat), want);

  // float_data: packed, then one element not packed (wire type 5).
  std::string unpacked = field(4, 5) + float_bytes({want[5]});
  OnnxTensor f;
  ASSERT_TRUE(parse_tensor(field(1, 0) + varint(6) + field(2, 0) + varint(kOnnxFloat) +
                               bytes_field(4, float_bytes({want.begin(), want.end() - 1})) +
                               unpacked,
                           f));
  EXPECT_EQ(values<float>(f, kOnnxFloat), want);

  OnnxTensor bad;
  EXPECT_FALSE(parse_tensor(raw.substr(0, raw.size() - 1), bad)) << "truncated raw_data";
  EXPECT_FALSE(parse_tensor(field(1, 3), bad)) << "group wire type";
  EXPECT_FALSE(parse_tensor(std::string(1, char(0x80)), bad)) << "truncated varint";
}

TEST(OnnxNodeData, FolderFromEnvironment) {
  const char* old = std::getenv("JETPLAN_ONNX_NODE_DATA");
  const std::string saved = old ? old : "";
  setenv("JETPLAN_ONNX_NODE_DATA", "/nonexistent/node", 1);
  EXPECT_EQ(node_data_dir(), "/nonexistent/node");
  EXPECT_FALSE(have_node_test("test_lstm_defaults"));
  EXPECT_TRUE(load_node_case("test_lstm_defaults").empty());
  if (old)
    setenv("JETPLAN_ONNX_NODE_DATA", saved.c_str(), 1);
  else
    unsetenv("JETPLAN_ONNX_NODE_DATA");
  EXPECT_EQ(node_data_dir(), old ? saved : "/usr/share/libonnx-testdata/data/node");
}

}  // namespace
}  // namespace jetplan::kernels
