// The converter's table of op families (converter/src/ops/registry.h): every fb::OpFamily has
// its rules (a serializer that writes the family's params table), and every op row is found
// again by its op type, in its own family.
#include <gmock/gmock.h>

#include <set>
#include <string>

#include "converter/src/lower/lower.h"
#include "converter/src/ops/registry.h"
#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

TEST(OpRegistry, EveryFamilyHasASerializerAndItsRowsAreFound) {
  std::set<std::string> op_types;
  for (int i = 0; i <= static_cast<int>(fb::OpFamily::MAX); ++i) {
    const auto family = static_cast<fb::OpFamily>(i);
    const ops::FamilyRules& rules = ops::family_rules(family);
    EXPECT_NE(rules.serialize, nullptr) << fb::EnumNameOpFamily(family);
    for (size_t r = 0; r < rules.rows.count; ++r) {
      const ops::OpRow& row = rules.rows.begin[r];
      EXPECT_TRUE(op_types.insert(row.op_type).second) << row.op_type << " has two rows";
      fb::OpFamily found = fb::OpFamily::MAX;
      EXPECT_EQ(ops::find_op_row(row.op_type, &found), &row) << row.op_type;
      EXPECT_EQ(found, family) << row.op_type;
      EXPECT_EQ(find_check(row.op_type), row.check) << row.op_type;
      EXPECT_STRNE(row.dtypes, "") << row.op_type;
    }
  }
  EXPECT_EQ(ops::find_op_row("NoSuchOp"), nullptr);
}

TEST(OpRegistry, AStepIsWrittenWithItsFamilysParamsTable) {
  flatbuffers::FlatBufferBuilder fbb;
  DraftStep step;
  step.name = "softmax";
  step.op.family = fb::OpFamily::Softmax;
  EXPECT_EQ(ops::serialize_step(fbb, step).first, fb::StepParams::SoftmaxParams);
  step.op.family = fb::OpFamily::Dequantize;  // shares QuantizeParams with Quantize
  EXPECT_EQ(ops::serialize_step(fbb, step).first, fb::StepParams::QuantizeParams);
}

}  // namespace
}  // namespace jetplan::converter::testing
