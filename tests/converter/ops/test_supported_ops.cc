// SUPPORTED_OPS.md stays in step with the families' op rows (converter/src/ops/): the committed
// file is what jetplan-convert --list-ops writes, and every running op has its dtypes.
#include <gmock/gmock.h>
#include <fstream>
#include <sstream>
#include <string>

#include "converter/src/import/onnx_import.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::AllOf;

// ---- SUPPORTED_OPS.md ----

TEST(SupportedOps, CommittedTableIsCurrent) {
  const std::string path = std::string(JETPLAN_SOURCE_DIR) + "/converter/SUPPORTED_OPS.md";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << path;
  std::ostringstream committed;
  committed << in.rdbuf();
  EXPECT_TRUE(committed.str() == supported_ops_markdown())
      << path << " is stale: the op tables changed. Regenerate it with\n"
      << "  build/converter/jetplan-convert --list-ops > converter/SUPPORTED_OPS.md";
}

TEST(SupportedOps, TableNamesEachOpsFamilyAndRestrictions) {
  const std::string md = supported_ops_markdown();
  EXPECT_THAT(md, HasSubstr("| Conv | runs | Conv | float32 | float32 (as float16) | 1 to 3 "
                            "spatial dims"));
  EXPECT_THAT(md, HasSubstr("| Shape | "));
  EXPECT_TRUE(describe_op("Shape").folds);
  EXPECT_THAT(md, HasSubstr("| Upsample (deprecated) |"));
  const OpSupport conv = describe_op("Conv");
  EXPECT_TRUE(conv.runs);
  EXPECT_STREQ(conv.family, "Conv");
  EXPECT_FALSE(describe_op("NoSuchOp").runs);
  // Opsets past 17: the ops ONNX added (Gelu, 20) are listed, and the first opset whose
  // definition of an op jetplan does not read is named.
  EXPECT_THAT(md, HasSubstr("| Gelu | runs"));
  EXPECT_EQ(describe_op("ReduceMean").refused_from, 0);
  EXPECT_EQ(describe_op("SpaceToDepth").refused_from, 0);  // reads 28 (the mode)
  EXPECT_EQ(describe_op("DequantizeLinear").refused_from, 0);  // reads 21 and 23
  EXPECT_EQ(describe_op("Mod").refused_from, 0);  // reads 28 (float fmod=0 refused there)
  EXPECT_EQ(describe_op("Range").refused_from, 27);  // folds only: no definition past 17 read
  EXPECT_THAT(md, HasSubstr("refused from opset 27 (its definition there is not read)"));
}

TEST(SupportedOps, EveryRunningOpHasItsDtypes) {
  int runs = 0;
  for (const OnnxOpInfo& op : onnx_default_domain_ops()) {
    const OpSupport s = describe_op(op.op_type);
    if (!s.runs) continue;
    ++runs;
    EXPECT_STRNE(s.dtypes, "") << op.op_type << " (family " << s.family << ") has no dtypes";
  }
  EXPECT_GT(runs, 100);
  const OpSupport add = describe_op("Add");
  EXPECT_STREQ(add.family, "Elementwise");  // the family that decides: Binary on float32
  EXPECT_THAT(add.dtypes, HasSubstr("int64"));
  EXPECT_THAT(add.notes, HasSubstr("fused into the preceding Conv/Gemm"));
  EXPECT_THAT(describe_op("TopK").dtypes, HasSubstr("int64"));
  EXPECT_THAT(describe_op("DynamicQuantizeLinear").dtypes, HasSubstr("uint8"));
}

// issue 14: "list what is left out and why": every op jetplan neither runs nor folds has its
// reason (converter/src/ops/left_out.cc) in the table, and a model that uses one is refused
// with it.
TEST(SupportedOps, EveryLeftOutOpSaysWhy) {
  int left_out = 0;
  for (const OnnxOpInfo& op : onnx_default_domain_ops()) {
    const OpSupport s = describe_op(op.op_type);
    if (s.runs || s.folds) continue;
    ++left_out;
    EXPECT_STRNE(s.notes, "") << op.op_type << " is left out without a reason in left_out.cc";
  }
  EXPECT_GT(left_out, 10);
  ModelBuilder m(11);
  m.input("x", {6}).output("y");
  m.node("Unique", {"x"}, {"y"}, "unique");
  EXPECT_EQ(convert_error(m),
            "1 unsupported node: 'unique' (Unique): no such op in jetplan (the output's extent "
            "depends on the input's values; jetplan gives a run-time extent only to a "
            "NonMaxSuppression that is a graph output)");
}

// The GPU column: per op, the dtypes of its CPU column that the family's CUDA kernel variants
// read (float32 as float16), "CPU only" where there are none.
TEST(SupportedOps, GpuColumnFollowsTheKernelVariants) {
  for (const OnnxOpInfo& op : onnx_default_domain_ops()) {
    const OpSupport s = describe_op(op.op_type);
    if (!s.runs) {
      EXPECT_EQ(s.gpu_dtypes, "") << op.op_type;
      continue;
    }
    // Every dtype listed for the GPU is one the CPU column names.
    std::string listed = s.gpu_dtypes;
    for (size_t at = listed.find(" (as float16)"); at != std::string::npos;
         at = listed.find(" (as float16)"))
      listed.erase(at, 13);
    std::stringstream items(listed);
    for (std::string d; std::getline(items, d, ',');) {
      if (!d.empty() && d[0] == ' ') d.erase(0, 1);
      const std::string cpu = s.dtypes;
      const bool any = cpu.find("any plan dtype") != std::string::npos;
      EXPECT_THAT(any ? plan_dtype_list() : cpu, HasSubstr(d)) << op.op_type;
      // Never one the row itself keeps on the CPU backend ("float64 (CPU backend only)").
      if (!any) {
        EXPECT_THAT(", " + cpu, ::testing::Not(HasSubstr(", " + d + " (CPU"))) << op.op_type;
      }
    }
  }
  EXPECT_EQ(describe_op("Conv").gpu_dtypes, "float32 (as float16)");
  EXPECT_EQ(describe_op("InstanceNormalization").gpu_dtypes, "float32 (as float16)");
  EXPECT_EQ(describe_op("GroupNormalization").gpu_dtypes, "float32 (as float16)");
  EXPECT_EQ(describe_op("DynamicQuantizeLinear").gpu_dtypes, "float32 (as float16)");
  // Float32 kernels only: its boxes and scores are not narrowed to float16.
  EXPECT_EQ(describe_op("NonMaxSuppression").gpu_dtypes, "float32");
  EXPECT_EQ(describe_op("TopK").gpu_dtypes, "float32 (as float16)");
  EXPECT_EQ(describe_op("ArgMax").gpu_dtypes, "float32 (as float16)");
  EXPECT_THAT(describe_op("GatherElements").gpu_dtypes, HasSubstr("int64"));
  EXPECT_EQ(describe_op("LRN").gpu_dtypes, "float32 (as float16)");
  EXPECT_THAT(describe_op("Add").gpu_dtypes, AllOf(HasSubstr("int32"), HasSubstr("int64")));
  EXPECT_THAT(describe_op("Add").gpu_dtypes, AllOf(HasSubstr("uint16"), HasSubstr("float64")));
  EXPECT_THAT(describe_op("Cast").gpu_dtypes, HasSubstr("bfloat16"));
  const std::string md = supported_ops_markdown();
  EXPECT_THAT(md, HasSubstr("| DynamicQuantizeLinear | runs | DynamicQuantize | "));
  EXPECT_THAT(md, HasSubstr("| Unique | - |  |  |  | the output's extent depends on"));
  EXPECT_THAT(md, HasSubstr("| NonMaxSuppression | runs | Nms | float32 -> int64 | float32 | "));
  EXPECT_THAT(md, HasSubstr("0 run on the CPU backend only"));  // every family has CUDA kernels
}

}  // namespace
}  // namespace jetplan::converter::testing
