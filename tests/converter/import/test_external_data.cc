// External data (and the files it may not reach) and malformed models at import.
#include <gmock/gmock.h>
#include <onnx/shape_inference/implementation.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "converter/src/import/onnx_import.h"
#include "converter/src/import/onnx_schemas.h"
#include "tests/converter/util/old_model_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::AllOf;

// ---- external data ----

class ExternalData : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/jetplan-external.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    for (const std::string& f : files_) std::remove(f.c_str());
    ::rmdir((dir_ + "/sub").c_str());
    ::rmdir(dir_.c_str());
    ::rmdir((dir_ + "-outside").c_str());
  }

  std::string write(const std::string& name, const std::string& bytes) {
    const std::string path = name[0] == '/' ? name : dir_ + "/" + name;
    std::ofstream(path, std::ios::binary) << bytes;
    files_.push_back(path);
    return path;
  }

  static std::string floats(const std::vector<float>& v) {
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  }

  // y = x + w, w [4] stored externally with these keys.
  static ModelBuilder model(const std::vector<std::pair<std::string, std::string>>& keys) {
    ModelBuilder m;
    m.input("x", {1, 4}).output("y");
    auto* w = m.empty_initializer("w", onnx::TensorProto::FLOAT, {4});
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [k, v] : keys) {
      auto* e = w->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
    m.node("Add", {"x", "w"}, {"y"}, "add");
    return m;
  }

  ConvertOptions options() const {
    ConvertOptions o;
    o.model_dir = dir_;
    return o;
  }

  std::string dir_;
  std::vector<std::string> files_;
};

TEST_F(ExternalData, LoadsOffsetsAndLengthsFromOneFile) {
  // Two tensors in one file, as onnx.save(..., all_tensors_to_one_file=True) writes them.
  write("weights.bin", floats({9, 9, 1, 2, 3, 4, 10, 20, 30, 40}));
  ModelBuilder m = model({{"location", "weights.bin"}, {"offset", "8"}, {"length", "16"}});
  auto* c = m.model().mutable_graph()->add_node();
  c->set_op_type("Constant");
  c->set_name("constant");
  c->add_output("k");
  auto* a = c->add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  auto* t = a->mutable_t();
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(4);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
           {"location", "weights.bin"}, {"offset", "24"}, {"length", "16"}}) {
    auto* e = t->add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  m.model().mutable_graph()->mutable_output(0)->set_name("z");
  m.node("Mul", {"y", "k"}, {"z"}, "mul");
  const ConvertResult r = convert_ok(m, options());
  expect_near(run_plan(r, {{1, 1, 1, 1}}), {20, 60, 120, 200});
}

TEST_F(ExternalData, WholeFileWithoutOffsetAndLength) {
  ::mkdir((dir_ + "/sub").c_str(), 0700);
  write("sub/w.bin", floats({1, 2, 3, 4}));
  const ConvertResult r = convert_ok(model({{"location", "sub/w.bin"}}), options());
  expect_near(run_plan(r, {{0, 0, 0, 0}}), {1, 2, 3, 4});
  write("sub/long.bin", floats({1, 2, 3, 4, 5}));
  EXPECT_THAT(convert_error(model({{"location", "sub/long.bin"}}), options()),
              HasSubstr("holds 20 bytes from offset 0 but [4] float32 needs 16 (without "
                        "'length' the tensor runs to the end of the file)"));
}

TEST_F(ExternalData, PathsOutsideTheModelDirectoryAreRefused) {
  const std::string outside = write(dir_ + "-outside.bin", floats({1, 2, 3, 4}));
  const std::string base = outside.substr(outside.rfind('/') + 1);
  EXPECT_THAT(
      convert_error(model({{"location", outside}}), options()),
      HasSubstr("initializer 'w': external data location '" + outside + "' is an absolute path"));
  EXPECT_THAT(convert_error(model({{"location", "../" + base}}), options()),
              HasSubstr("leaves the model's directory ('..')"));
  EXPECT_THAT(convert_error(model({{"location", "sub/../../" + base}}), options()),
              HasSubstr("leaves the model's directory ('..')"));
  // A symbolic link inside the directory that points out of it.
  const std::string link = dir_ + "/link.bin";
  ASSERT_EQ(::symlink(outside.c_str(), link.c_str()), 0);
  files_.push_back(link);
  EXPECT_THAT(convert_error(model({{"location", "link.bin"}}), options()),
              HasSubstr("outside the model's directory (through a symbolic link)"));
  EXPECT_THAT(convert_error(model({{"location", std::string("w.bin\0x", 7)}}), options()),
              HasSubstr("NUL character"));
}

TEST_F(ExternalData, OffsetsAndLengthsAreCheckedAgainstTheFile) {
  write("w.bin", floats({1, 2, 3, 4}));
  EXPECT_THAT(
      convert_error(model({{"location", "w.bin"}, {"offset", "4"}, {"length", "16"}}), options()),
      HasSubstr("initializer 'w': external file 'w.bin' (16 bytes) is too short for 16 "
                "bytes at offset 4"));
  EXPECT_THAT(convert_error(model({{"location", "w.bin"}, {"offset", "99999999999"}}), options()),
              HasSubstr("is too short for 16 bytes at offset 99999999999"));
  EXPECT_THAT(convert_error(model({{"location", "w.bin"}, {"length", "12"}}), options()),
              HasSubstr("length 12 does not match [4] float32 (16 bytes)"));
  EXPECT_THAT(convert_error(model({{"location", "w.bin"}, {"offset", "-4"}}), options()),
              HasSubstr("external data 'offset' is '-4', not a byte count"));
  EXPECT_THAT(convert_error(model({{"offset", "0"}}), options()),
              HasSubstr("initializer 'w' is marked as external data but names no file"));
  EXPECT_THAT(convert_error(model({{"location", "missing.bin"}}), options()),
              HasSubstr("initializer 'w': cannot open external file 'missing.bin': No such file"));
  ::mkdir((dir_ + "/sub").c_str(), 0700);
  EXPECT_THAT(convert_error(model({{"location", "sub"}}), options()),
              HasSubstr("external file 'sub' is not a regular file"));
}

TEST_F(ExternalData, BytesWithoutADirectoryAreRefused) {
  EXPECT_THAT(convert_error(model({{"location", "w.bin"}})),
              HasSubstr("initializer 'w' keeps its data in the external file 'w.bin', but the "
                        "model was given without the directory it lives in"));
}

// ---- malformed models ----

TEST(ImportBadInput, SelfLoopIsACycle) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y");
  m.node("Add", {"x", "a"}, {"a"}, "loop");
  m.node("Relu", {"a"}, {"y"}, "relu");
  EXPECT_EQ(convert_error(m), "cyclic graph: 'loop' (Add) -> 'loop' (Add)");
}

TEST(ImportBadInput, OutputNobodyProduces) {
  ModelBuilder m;
  m.input("x", {1, 4}).output("y").output("ghost");
  m.node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(convert_error(m),
              HasSubstr("graph output 'ghost' is not produced by any node or initializer"));
}

TEST(ImportBadInput, OldModelsAreCheckedBeforeTheUpgrade) {
  // Structure errors name the model's own nodes, not the upgraded ones.
  ModelBuilder m = old_model(6);
  m.input("x", {1, 3, 8, 8}).output("y");
  m.node("Conv", {"x", "conv_w"}, {"y"}, "old_conv");
  EXPECT_THAT(convert_error(m),
              StartsWith("missing initializer: node 'old_conv' (Conv) reads 'conv_w'"));
}

TEST(ImportBadInput, ShapeMismatchesNameTheNode) {
  ModelBuilder matmul;
  matmul.input("a", {2, 3}).output("y");
  matmul.random("b", {4, 5});
  matmul.node("MatMul", {"a", "b"}, {"y"}, "mm_bad");
  EXPECT_THAT(convert_error(matmul), HasSubstr("mm_bad"));

  ModelBuilder reshape;
  reshape.input("x", {2, 3}).output("y");
  reshape.initializer_i64("shape", {2}, {4, 2});
  reshape.node("Reshape", {"x", "shape"}, {"y"}, "reshape_bad");
  EXPECT_THAT(convert_error(reshape), HasSubstr("reshape_bad"));

  ModelBuilder declared;  // the model declares an output shape the op does not give
  declared.input("x", {2, 3}).output("y");
  auto* dims = declared.model()
                   .mutable_graph()
                   ->mutable_output(0)
                   ->mutable_type()
                   ->mutable_tensor_type()
                   ->mutable_shape();
  dims->add_dim()->set_dim_value(3);
  dims->add_dim()->set_dim_value(2);
  declared.node("Relu", {"x"}, {"y"}, "relu_declared");
  EXPECT_THAT(convert_error(declared), HasSubstr("relu_declared"));
}

// Damaged old models go through libonnx's version converter, whose adapters trust the model
// more than the checker does: they must end in a ConvertError or a plan, never a crash.
TEST(ImportBadInput, DamagedOldModelsNeverCrash) {
  ModelBuilder m = old_model(6);
  m.input("x", {2, 3, 4, 5}).output("y").output("p");
  weight(m, "b", {3}, {1.f, 2.f, 3.f});
  auto& add = m.node("Add", {"x", "b"}, {"s"}, "add");
  attr(add, "broadcast", int64_t{1});
  attr(add, "axis", int64_t{1});
  for (const char* n : {"g", "h", "mu", "var"}) weight(m, n, {3}, {0.5f, 1.f, 1.5f});
  auto& bn = m.node("BatchNormalization", {"s", "g", "h", "mu", "var"}, {"bn"}, "bn");
  attr(bn, "is_test", int64_t{1});
  attr(m.node("Concat", {"bn", "s"}, {"both"}, "concat"), "axis", int64_t{0});
  m.node("Flatten", {"both"}, {"flat2"}, "flatten2");
  m.node("Flatten", {"s"}, {"flat"}, "flatten");
  m.output("f2");
  m.node("Relu", {"flat2"}, {"f2"}, "relu");
  weight(m, "w", {60, 7}, ramp(420, 0.01f, -0.1f));
  weight(m, "c", {7}, ramp(7));
  attr(m.node("Gemm", {"flat", "w", "c"}, {"y"}, "gemm"), "broadcast", int64_t{1});
  attr(m.node("Softmax", {"s"}, {"p"}, "softmax"), "axis", int64_t{1});
  const std::string good = m.bytes();
  convert_ok(m);

  expect_damaged_copies_convert_or_fail(good, 300, 4242, "", false);
}

}  // namespace
}  // namespace jetplan::converter::testing
