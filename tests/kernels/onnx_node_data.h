// The ONNX backend node tests' data (onnx/backend/test/data/node/<test>/test_data_set_0/
// input_<k>.pb, output_<k>.pb), read without protobuf: a minimal onnx.TensorProto reader for the
// fields those files use. The data is at /usr/share/libonnx-testdata/data/node (Debian's
// libonnx-testdata) unless JETPLAN_ONNX_NODE_DATA names another folder; a test skips when its
// data is not there.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace jetplan::kernels::test_util {

// onnx.TensorProto.DataType values these tests read.
constexpr int kOnnxFloat = 1;
constexpr int kOnnxUInt8 = 2;
constexpr int kOnnxInt8 = 3;
constexpr int kOnnxInt32 = 6;

struct OnnxTensor {
  std::string name;
  int dtype = 0;  // onnx.TensorProto.DataType
  std::vector<int64_t> dims;
  std::string raw;  // the elements, little-endian, from raw_data or float_data
};

inline bool read_varint(const std::string& s, size_t& i, uint64_t& v) {
  v = 0;
  for (int shift = 0; i < s.size() && shift < 64; shift += 7) {
    const auto byte = static_cast<unsigned char>(s[i++]);
    v |= uint64_t{byte & 0x7fu} << shift;
    if (!(byte & 0x80u)) return true;
  }
  return false;
}

// The onnx.TensorProto fields these files use, in protobuf wire format: dims (1, packed or
// not), data_type (2), float_data (4), name (8), raw_data (9); any other field is skipped.
inline bool parse_tensor(const std::string& s, OnnxTensor& t) {
  for (size_t i = 0; i < s.size();) {
    uint64_t key, v;
    if (!read_varint(s, i, key)) return false;
    const uint64_t field = key >> 3, wire = key & 7;
    if (wire == 0) {
      if (!read_varint(s, i, v)) return false;
      if (field == 1) t.dims.push_back(int64_t(v));
      if (field == 2) t.dtype = int(v);
    } else if (wire == 2) {
      if (!read_varint(s, i, v) || v > s.size() - i) return false;
      const std::string payload = s.substr(i, size_t(v));
      i += size_t(v);
      for (size_t j = 0; field == 1 && j < payload.size();) {
        if (!read_varint(payload, j, v)) return false;
        t.dims.push_back(int64_t(v));
      }
      if (field == 4 || field == 9) t.raw += payload;
      if (field == 8) t.name = payload;
    } else if (wire == 1 || wire == 5) {
      const size_t n = wire == 1 ? 8 : 4;
      if (n > s.size() - i) return false;
      if (field == 4) t.raw += s.substr(i, n);
      i += n;
    } else {
      return false;
    }
  }
  return true;
}

inline std::string node_data_dir() {
  const char* env = std::getenv("JETPLAN_ONNX_NODE_DATA");
  return env ? env : "/usr/share/libonnx-testdata/data/node";
}

// Whether the node test `test` is there (its model.onnx): a test skips when not.
inline bool have_node_test(const std::string& test) {
  return bool(std::ifstream(node_data_dir() + "/" + test + "/model.onnx"));
}

// input_<k>.pb and then output_<k>.pb of test_data_set_0, in order. A file that does not parse
// is a failure.
inline std::vector<OnnxTensor> load_node_case(const std::string& test) {
  std::vector<OnnxTensor> out;
  for (const char* kind : {"input_", "output_"})
    for (int k = 0;; ++k) {
      const std::string path =
          node_data_dir() + "/" + test + "/test_data_set_0/" + kind + std::to_string(k) + ".pb";
      std::ifstream f(path, std::ios::binary);
      if (!f) break;
      std::ostringstream bytes;
      bytes << f.rdbuf();
      out.emplace_back();
      EXPECT_TRUE(parse_tensor(bytes.str(), out.back())) << path;
    }
  return out;
}

// The tensors of a case by name (ONNX names them after the operator's inputs and outputs).
inline std::map<std::string, OnnxTensor> by_name(const std::vector<OnnxTensor>& tensors) {
  std::map<std::string, OnnxTensor> out;
  for (const OnnxTensor& t : tensors) out[t.name] = t;
  return out;
}

inline int64_t element_count(const OnnxTensor& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  return n;
}

// The elements as T; expects the data type `dtype` and exactly element_count elements.
template <typename T>
std::vector<T> values(const OnnxTensor& t, int dtype) {
  EXPECT_EQ(t.dtype, dtype) << t.name;
  EXPECT_EQ(int64_t(t.raw.size()), element_count(t) * int64_t(sizeof(T))) << t.name;
  std::vector<T> v(t.raw.size() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t.raw.data(), v.size() * sizeof(T));
  return v;
}

}  // namespace jetplan::kernels::test_util
