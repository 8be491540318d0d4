#include "npy.h"

#include <cstring>
#include <fstream>
#include <iterator>

namespace jetplan::tools {
namespace {

// Finds `'key':` in the header dict and returns the text after it.
bool find_value(const std::string& header, const std::string& key, size_t* pos) {
  const size_t at = header.find("'" + key + "'");
  if (at == std::string::npos) return false;
  const size_t colon = header.find(':', at);
  if (colon == std::string::npos) return false;
  *pos = colon + 1;
  while (*pos < header.size() && header[*pos] == ' ') ++*pos;
  return *pos < header.size();
}

}  // namespace

std::string shape_string(const int64_t* dims, int32_t rank) {
  if (rank == 0) return "scalar";
  std::string s;
  for (int32_t i = 0; i < rank; ++i) {
    if (i) s += "x";
    s += std::to_string(dims[i]);
  }
  return s;
}

const char* dtype_name(jp_dtype dtype) {
  switch (dtype) {
    case JP_FLOAT32: return "float32";
    case JP_FLOAT16: return "float16";
    case JP_INT8: return "int8";
    case JP_UINT8: return "uint8";
    case JP_INT32: return "int32";
    case JP_INT64: return "int64";
    case JP_BOOL: return "bool";
    case JP_FLOAT64: return "float64";
    case JP_INT16: return "int16";
    case JP_UINT16: return "uint16";
    case JP_UINT32: return "uint32";
    case JP_UINT64: return "uint64";
    case JP_BFLOAT16: return "bfloat16";
  }
  return "unknown";
}

const char* npy_descr(jp_dtype dtype) {
  switch (dtype) {
    case JP_FLOAT32: return "<f4";
    case JP_FLOAT16: return "<f2";
    case JP_INT8: return "|i1";
    case JP_UINT8: return "|u1";
    case JP_INT32: return "<i4";
    case JP_INT64: return "<i8";
    case JP_BOOL: return "|b1";
    case JP_FLOAT64: return "<f8";
    case JP_INT16: return "<i2";
    case JP_UINT16: return "<u2";
    case JP_UINT32: return "<u4";
    case JP_UINT64: return "<u8";
    case JP_BFLOAT16: return "<u2";  // numpy has no bfloat16: the bit patterns, as uint16
  }
  return "";
}

size_t dtype_size(jp_dtype dtype) {
  switch (dtype) {
    case JP_INT8:
    case JP_UINT8:
    case JP_BOOL: return 1;
    case JP_FLOAT16:
    case JP_INT16:
    case JP_UINT16:
    case JP_BFLOAT16: return 2;
    case JP_FLOAT32:
    case JP_INT32:
    case JP_UINT32: return 4;
    case JP_INT64:
    case JP_FLOAT64:
    case JP_UINT64: return 8;
  }
  return 1;
}

bool read_npy(const std::string& path, NpyArray* out, std::string* error) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot open '" + path + "'";
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                             std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0) {
    *error = "'" + path + "' is not a .npy file";
    return false;
  }
  const uint8_t major = bytes[6];
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    header_start = 10;
  } else if ((major == 2 || major == 3) && bytes.size() >= 12) {
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) |
                 (static_cast<size_t>(bytes[11]) << 24);
    header_start = 12;
  } else {
    *error = "'" + path + "': unsupported .npy version " + std::to_string(major);
    return false;
  }
  if (header_start + header_len > bytes.size()) {
    *error = "'" + path + "': truncated .npy header";
    return false;
  }
  const std::string header(bytes.begin() + header_start,
                           bytes.begin() + header_start + header_len);
  size_t pos = 0;
  if (!find_value(header, "descr", &pos) || header[pos] != '\'') {
    *error = "'" + path + "': .npy header has no descr";
    return false;
  }
  const size_t end = header.find('\'', pos + 1);
  out->dtype = header.substr(pos + 1, end - pos - 1);
  if (!find_value(header, "fortran_order", &pos) || header.compare(pos, 5, "False") != 0) {
    *error = "'" + path + "': only C-order .npy arrays are supported";
    return false;
  }
  if (!find_value(header, "shape", &pos) || header[pos] != '(') {
    *error = "'" + path + "': .npy header has no shape";
    return false;
  }
  out->shape.clear();
  const size_t close = header.find(')', pos);
  std::string dims = header.substr(pos + 1, close - pos - 1);
  size_t i = 0;
  while (i < dims.size()) {
    while (i < dims.size() && (dims[i] == ' ' || dims[i] == ',')) ++i;
    if (i >= dims.size()) break;
    size_t used = 0;
    try {
      out->shape.push_back(std::stoll(dims.substr(i), &used));
    } catch (...) {
      *error = "'" + path + "': bad .npy shape '" + dims + "'";
      return false;
    }
    i += used;
  }
  out->data.assign(bytes.begin() + header_start + header_len, bytes.end());
  return true;
}

bool write_npy(const std::string& path, const std::string& dtype,
               const std::vector<int64_t>& shape, const void* data, size_t bytes,
               std::string* error) {
  std::string dict = "{'descr': '" + dtype + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    dict += std::to_string(shape[i]);
    if (shape.size() == 1 || i + 1 < shape.size()) dict += ",";
    if (i + 1 < shape.size()) dict += " ";
  }
  dict += "), }";
  // The header (magic + version + length + dict + newline) is padded to a multiple of 64.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::ofstream file(path, std::ios::binary);
  if (!file) {
    *error = "cannot write '" + path + "'";
    return false;
  }
  const uint16_t len = static_cast<uint16_t>(dict.size());
  file.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  file.write(len_bytes, 2);
  file.write(dict.data(), static_cast<std::streamsize>(dict.size()));
  file.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  if (!file) {
    *error = "error writing '" + path + "'";
    return false;
  }
  return true;
}

}  // namespace jetplan::tools
