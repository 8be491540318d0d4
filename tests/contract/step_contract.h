// What every per-family contract rule reads and reports through: one step of a plan, its input
// and output shapes, and the problem list the plan's check collects. The rules themselves
// (rules_<subject>.cc) are read from the schema's comments (schemas/plan.fbs), not from the
// converter, so the two check each other; each family has exactly one, contract_<file>, declared
// here from kernels/op_families.def and reached through plan_contract.cc's table.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "jetplan/plan_generated.h"

namespace jetplan::converter::testing::contract {

using Shape = std::vector<int64_t>;

// Elements of a tensor of shape `s` (1 for a scalar).
int64_t count(const Shape& s);
// "[2,3,4]".
std::string str(const Shape& s);
// A schema vector of dims as a Shape (empty when absent).
Shape vec(const flatbuffers::Vector<int64_t>* v);
// Numpy broadcast of `a` and `b` into *out; false when they do not broadcast.
bool broadcast(const Shape& a, const Shape& b, Shape* out);
// The output shape of a sliding window over x [N, C, *in]: [N, channels, *out], each out extent
// (in + pad_begin + pad_end - dilation (k - 1) - 1) / stride + 1.
Shape window_out(const Shape& x, int64_t channels, const Shape& k, const Shape& st,
                 const Shape& dil, const Shape& pb, const Shape& pe);

// One step under check. Borrows the plan, the step and the problem list from the plan's check,
// which outlives it; the rule reads them and appends to the list.
class StepContract {
 public:
  // The step's inputs and outputs are in range (checked before any rule runs).
  StepContract(const fb::Plan* plan, const fb::Step* step, std::string name,
               std::vector<std::string>* problems);

  const fb::Step* const step;
  const std::string name;
  const std::vector<Shape> in;  // the input shapes, in step order
  const Shape y;                // the first output's shape
  const bool cpu;               // a plan for the CPU backend

  const fb::Tensor* tensor(uint32_t index) const { return plan_->tensors()->Get(index); }
  Shape shape(uint32_t index) const { return vec(tensor(index)->shape()); }
  fb::DType in_dtype(uint32_t input) const { return tensor(step->inputs()->Get(input))->dtype(); }
  fb::DType dtype_of(uint32_t output) const {
    return tensor(step->outputs()->Get(output))->dtype();
  }

  // One problem, its parts streamed together.
  template <typename... A>
  void bad(A&&... a) {
    std::ostringstream o;
    (o << ... << a);
    problems_->push_back(o.str());
  }
  // "step <name>: <what>" unless ok.
  void expect(bool ok, const std::string& what) {
    if (!ok) bad("step ", name, ": ", what);
  }
  // Families whose kernels compute in one float type only: every input has it.
  void inputs_are(fb::DType dtype);
  // The step has `count` inputs, as its params' flags say; false (reported) when not.
  bool input_count_is(size_t count);

 private:
  const fb::Plan* plan_;
  std::vector<std::string>* problems_;
};

// A family's rule: what its steps' params, inputs and outputs must satisfy.
using ContractRule = void (*)(StepContract& c);

#define JP_OP_FAMILY(Name, file, Params, Backends) void contract_##file(StepContract& c);
#include "kernels/op_families.def"
#undef JP_OP_FAMILY

}  // namespace jetplan::converter::testing::contract
