#include "converter/src/import/onnx_proto.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "converter/src/ir/error.h"
#include "converter/src/ir/graph.h"

namespace jetplan::converter {

onnx::AttributeProto::AttributeType attribute_type(const onnx::AttributeProto& a) {
  if (a.type() != onnx::AttributeProto::UNDEFINED) return a.type();
  if (a.has_f()) return onnx::AttributeProto::FLOAT;
  if (a.has_i()) return onnx::AttributeProto::INT;
  if (a.has_s()) return onnx::AttributeProto::STRING;
  if (a.has_t()) return onnx::AttributeProto::TENSOR;
  if (a.floats_size()) return onnx::AttributeProto::FLOATS;
  if (a.ints_size()) return onnx::AttributeProto::INTS;
  if (a.strings_size()) return onnx::AttributeProto::STRINGS;
  return onnx::AttributeProto::UNDEFINED;
}
namespace {

// One external data file, opened once however many tensors it holds.
struct ExternalFile {
  std::FILE* file = nullptr;
  uint64_t size = 0;
};

class ExternalData {
 public:
  explicit ExternalData(std::string dir) : dir_(std::move(dir)) {}
  ~ExternalData() {
    for (auto& [path, f] : files_) std::fclose(f.file);
  }
  ExternalData(const ExternalData&) = delete;
  ExternalData& operator=(const ExternalData&) = delete;

  // Replaces the tensor's external reference by its bytes (raw_data).
  void load(onnx::TensorProto* t, const std::string& what) {
    std::string location;
    uint64_t offset = 0, length = 0;
    bool has_location = false, has_length = false;
    for (const auto& kv : t->external_data()) {
      const std::string& key = kv.key();
      if (key == "location") {
        if (has_location) fail(what, ": external data gives 'location' twice");
        has_location = true;
        location = kv.value();
      } else if (key == "offset" || key == "length") {
        uint64_t v;
        if (!parse_u64(kv.value(), &v))
          fail(what, ": external data '", key, "' is '", kv.value(), "', not a byte count");
        (key == "offset" ? offset : length) = v;
        if (key == "length") has_length = true;
      }  // "checksum" and keys of later specs do not change where the bytes are
    }
    if (!has_location || location.empty())
      fail(what, " is marked as external data but names no file (no 'location')");
    check_location(location, what);
    if (dir_.empty())
      fail(what, " keeps its data in the external file '", location,
           "', but the model was given without the directory it lives in (convert it from its "
           "file, or set ConvertOptions::model_dir)");

    const DataType dtype = static_cast<DataType>(t->data_type());
    const size_t element = dtype_size(dtype);
    if (dtype == DataType::kString || element == 0)
      fail(what, ": external data of type ", dtype_name(dtype), " is not supported");
    Shape shape;
    for (int64_t d : t->dims()) {
      if (d < 0) fail(what, " has a negative dim ", d);
      shape.push_back(d);
    }
    const int64_t need = checked_bytes(shape, element);
    if (need < 0) fail(what, " of shape ", shape_str(shape), " is too large");

    const ExternalFile& f = open(location, what);
    const std::string where = cat(what, ": external file '", location, "' (", f.size, " bytes)");
    if (has_length && length != static_cast<uint64_t>(need))
      fail(where, ": length ", length, " does not match ", shape_str(shape), " ", dtype_name(dtype),
           " (", need, " bytes)");
    if (offset > f.size || static_cast<uint64_t>(need) > f.size - offset)
      fail(where, " is too short for ", need, " bytes at offset ", offset);
    if (!has_length && f.size - offset != static_cast<uint64_t>(need))
      fail(where, " holds ", f.size - offset, " bytes from offset ", offset, " but ",
           shape_str(shape), " ", dtype_name(dtype), " needs ", need,
           " (without 'length' the tensor runs to the end of the file)");
    std::string bytes(static_cast<size_t>(need), '\0');
    if (need > 0 && (fseeko(f.file, static_cast<off_t>(offset), SEEK_SET) != 0 ||
                     std::fread(&bytes[0], 1, bytes.size(), f.file) != bytes.size()))
      fail(where, ": cannot read ", need, " bytes at offset ", offset);
    t->clear_external_data();
    t->set_data_location(onnx::TensorProto::DEFAULT);
    t->set_raw_data(std::move(bytes));
  }

 private:
  static bool parse_u64(const std::string& s, uint64_t* v) {
    if (s.empty() || s.size() > 18 || s.find_first_not_of("0123456789") != std::string::npos)
      return false;
    *v = std::strtoull(s.c_str(), nullptr, 10);
    return true;
  }

  // Only files inside the model's directory: a model is untrusted input and must not make the
  // converter read (and embed in a plan) whatever file its author names.
  static void check_location(const std::string& location, const std::string& what) {
    if (location.find('\0') != std::string::npos)
      fail(what, ": external data location holds a NUL character");
    if (location[0] == '/')
      fail(what, ": external data location '", location,
           "' is an absolute path; jetplan reads external data only from files in the model's "
           "directory");
    size_t at = 0;
    while (at <= location.size()) {
      const size_t end = std::min(location.find('/', at), location.size());
      if (location.compare(at, end - at, "..") == 0)
        fail(what, ": external data location '", location,
             "' leaves the model's directory ('..'); jetplan reads external data only from "
             "files in the model's directory");
      at = end + 1;
    }
  }

  const ExternalFile& open(const std::string& location, const std::string& what) {
    auto it = files_.find(location);
    if (it != files_.end()) return it->second;
    const std::string path = dir_ + "/" + location;
    if (real_dir_.empty() && !real_path(dir_, &real_dir_))
      fail(what, ": cannot open the model's directory '", dir_, "': ", std::strerror(errno));
    // A symbolic link inside the directory may point anywhere: the file itself must be inside.
    std::string real;
    if (!real_path(path, &real))
      fail(what, ": cannot open external file '", location, "': ", std::strerror(errno));
    if (real.compare(0, real_dir_.size(), real_dir_) != 0 ||
        (real.size() > real_dir_.size() && real_dir_ != "/" && real[real_dir_.size()] != '/'))
      fail(what, ": external file '", location, "' resolves to '", real,
           "', outside the model's directory (through a symbolic link)");
    struct stat st;
    if (::stat(real.c_str(), &st) != 0)
      fail(what, ": cannot open external file '", location, "': ", std::strerror(errno));
    if (!S_ISREG(st.st_mode)) fail(what, ": external file '", location, "' is not a regular file");
    ExternalFile f;
    f.file = std::fopen(real.c_str(), "rb");
    if (f.file == nullptr)
      fail(what, ": cannot open external file '", location, "': ", std::strerror(errno));
    f.size = static_cast<uint64_t>(st.st_size);
    return files_.emplace(location, f).first->second;
  }

  // false (errno set) when the path does not resolve.
  static bool real_path(const std::string& path, std::string* out) {
    char* resolved = ::realpath(path.c_str(), nullptr);
    if (resolved == nullptr) return false;
    *out = resolved;
    std::free(resolved);
    return true;
  }

  std::string dir_;
  std::string real_dir_;
  std::map<std::string, ExternalFile> files_;
};

// Every tensor of the graph with external data: initializers and tensor attributes (Constant),
// in subgraphs too.
void load_all(onnx::GraphProto* graph, ExternalData* data) {
  auto external = [](const onnx::TensorProto& t) {
    return t.data_location() == onnx::TensorProto::EXTERNAL;
  };
  for (auto& init : *graph->mutable_initializer())
    if (external(init)) data->load(&init, "initializer '" + init.name() + "'");
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* node = graph->mutable_node(i);
    for (auto& a : *node->mutable_attribute()) {
      const std::string what = cat("node ", proto_label(*node, i), " attribute '", a.name(), "'");
      if (a.has_t() && external(a.t())) data->load(a.mutable_t(), what);
      for (auto& t : *a.mutable_tensors())
        if (external(t)) data->load(&t, what);
      if (a.has_g()) load_all(a.mutable_g(), data);
      for (auto& g : *a.mutable_graphs()) load_all(&g, data);
    }
  }
}

// The names `graph` reads that it does not define.
std::set<std::string> graph_outer_references(const onnx::GraphProto& graph) {
  std::set<std::string> defined, read;
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const auto& in : graph.input()) defined.insert(in.name());
  for (const auto& node : graph.node()) {
    for (const std::string& in : node.input())
      if (!in.empty()) read.insert(in);
    for (const std::string& name : outer_references(node)) read.insert(name);
    for (const std::string& out : node.output()) defined.insert(out);
  }
  for (const auto& out : graph.output()) read.insert(out.name());
  std::set<std::string> outer;
  for (const std::string& name : read)
    if (!defined.count(name)) outer.insert(name);
  return outer;
}

}  // namespace

std::set<std::string> outer_references(const onnx::NodeProto& node) {
  std::set<std::string> out;
  for (const auto& a : node.attribute()) {
    if (a.has_g()) out.merge(graph_outer_references(a.g()));
    for (const auto& g : a.graphs()) out.merge(graph_outer_references(g));
  }
  return out;
}

std::string proto_label(const onnx::NodeProto& node, int index) {
  const std::string name =
      node.name().empty() ? node.op_type() + "_" + std::to_string(index) : node.name();
  return cat("'", name, "' (", node.op_type(), ")");
}

void load_external_data(onnx::GraphProto* graph, const std::string& model_dir) {
  ExternalData data(model_dir);
  load_all(graph, &data);
}

}  // namespace jetplan::converter
