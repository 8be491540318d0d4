// Walks every OpFamily of the schema and checks that each registry of the project has its row:
// kernels/op_families.def, the runtime (prepare + CPU kernel), the converter (serializer), the
// tests' plan contract (an independent rule), and the GPU side: a selector with at least one
// kernel variant for a CUDA family, none for one marked CPU_ONLY. The registries are also
// static_assert'ed where they are built; this test is the one place that sees them side by side,
// from the schema's enum rather than from the .def list.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "converter/src/ops/registry.h"
#include "jetplan/plan_generated.h"
#include "kernels/cuda/select.h"
#include "kernels/cuda/variants.h"
#include "runtime/src/prepare/op_families.h"
#include "tests/contract/plan_contract.h"

namespace jetplan {
namespace {

struct DefRow {
  fb::OpFamily op;
  const char* name;
  const char* file;
  fb::StepParams params;
  bool cuda;
};

#define JP_BACKENDS_CUDA true
#define JP_BACKENDS_CPU_ONLY false
constexpr DefRow kDefRows[] = {
#define JP_OP_FAMILY(Name, file, Params, Backends) \
  {fb::OpFamily::Name, #Name, #file, fb::StepParams::Params, JP_BACKENDS_##Backends},
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};
#undef JP_BACKENDS_CUDA
#undef JP_BACKENDS_CPU_ONLY

const DefRow* def_row(fb::OpFamily op) {
  for (const DefRow& row : kDefRows)
    if (row.op == op) return &row;
  return nullptr;
}

size_t variant_count(fb::OpFamily op) {
  size_t count = 0, n = 0;
  const kernels::cuda::KernelVariant* variants = kernels::cuda::kernel_variants(&n);
  for (size_t i = 0; i < n; ++i)
    if (variants[i].family == static_cast<uint16_t>(op)) ++count;
  return count;
}

class EveryOpFamily : public ::testing::TestWithParam<fb::OpFamily> {};

TEST_P(EveryOpFamily, HasItsRowInEveryRegistry) {
  const fb::OpFamily op = GetParam();
  const std::string schema_name = fb::EnumNameOpFamily(op);
  SCOPED_TRACE(schema_name);

  const DefRow* row = def_row(op);
  ASSERT_NE(row, nullptr) << "kernels/op_families.def has no row for " << schema_name;
  EXPECT_EQ(schema_name, row->name) << "the .def row's name differs from the schema's";
  EXPECT_EQ(static_cast<size_t>(op), static_cast<size_t>(row - kDefRows))
      << "the .def rows are not in enum order";

  const rt::OpFamilyEntry* runtime = rt::find_op_family(op);
  ASSERT_NE(runtime, nullptr) << "the runtime has no row";
  EXPECT_EQ(runtime->op, op);
  EXPECT_EQ(runtime->params_type, row->params);
  EXPECT_NE(runtime->prepare, nullptr) << "no prepare_" << row->file;
  EXPECT_NE(runtime->run_cpu, nullptr) << "no CPU kernel run_" << row->file << "_cpu";

  EXPECT_NE(converter::ops::family_rules(op).serialize, nullptr)
      << "no converter serializer in converter/src/ops/" << row->file << ".cc";

  EXPECT_TRUE(converter::testing::has_contract_rule(op)) << "no plan contract rule";

  const bool has_selector = kernels::cuda::has_selector(static_cast<uint16_t>(op));
  const size_t variants = variant_count(op);
  if (row->cuda) {
    EXPECT_TRUE(has_selector) << "marked CUDA but kernels/cuda has no select_" << row->file;
    EXPECT_GT(variants, 0u) << "marked CUDA but no kernel variant of the family";
  } else {
    EXPECT_FALSE(has_selector) << "marked CPU_ONLY but a selector exists";
    EXPECT_EQ(variants, 0u) << "marked CPU_ONLY but kernel variants exist";
  }
}

// Every value of the schema's enum, not of the .def list: a family in plan.fbs but not in the
// list fails here by name.
INSTANTIATE_TEST_SUITE_P(
    Schema, EveryOpFamily,
    ::testing::ValuesIn(std::begin(fb::EnumValuesOpFamily()), std::end(fb::EnumValuesOpFamily())),
    [](const ::testing::TestParamInfo<fb::OpFamily>& info) {
      return std::string(fb::EnumNameOpFamily(info.param));
    });

TEST(OpFamilyList, CoversTheSchemaExactly) {
  EXPECT_EQ(std::size(kDefRows), static_cast<size_t>(fb::OpFamily::MAX) + 1);
  for (const DefRow& row : kDefRows)
    EXPECT_STREQ(fb::EnumNameOpFamily(row.op), row.name);
}

TEST(OpFamilyList, NoFamilyOutsideTheSchemaHasARow) {
  const auto past = static_cast<fb::OpFamily>(static_cast<uint16_t>(fb::OpFamily::MAX) + 1);
  EXPECT_EQ(rt::find_op_family(past), nullptr);
  EXPECT_FALSE(converter::testing::has_contract_rule(past));
  EXPECT_FALSE(kernels::cuda::has_selector(static_cast<uint16_t>(past)));
}

}  // namespace
}  // namespace jetplan
