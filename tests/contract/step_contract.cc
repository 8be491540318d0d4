#include "tests/contract/step_contract.h"

#include <algorithm>
#include <utility>

namespace jetplan::converter::testing::contract {
namespace {

std::vector<Shape> input_shapes(const fb::Plan* plan, const fb::Step* step) {
  std::vector<Shape> in;
  for (uint32_t i : *step->inputs()) in.push_back(vec(plan->tensors()->Get(i)->shape()));
  return in;
}

}  // namespace

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string str(const Shape& s) {
  std::ostringstream o;
  o << "[";
  for (size_t i = 0; i < s.size(); ++i) o << (i ? "," : "") << s[i];
  o << "]";
  return o.str();
}

Shape vec(const flatbuffers::Vector<int64_t>* v) {
  return v ? Shape(v->begin(), v->end()) : Shape();
}

bool broadcast(const Shape& a, const Shape& b, Shape* out) {
  const size_t r = std::max(a.size(), b.size());
  out->assign(r, 1);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    (*out)[i] = std::max(da, db);
  }
  return true;
}

Shape window_out(const Shape& x, int64_t channels, const Shape& k, const Shape& st,
                 const Shape& dil, const Shape& pb, const Shape& pe) {
  Shape out = {x[0], channels};
  for (size_t i = 0; i + 2 < x.size(); ++i)
    out.push_back((x[i + 2] + pb[i] + pe[i] - dil[i] * (k[i] - 1) - 1) / st[i] + 1);
  return out;
}

StepContract::StepContract(const fb::Plan* plan, const fb::Step* step, std::string name,
                           std::vector<std::string>* problems)
    : step(step),
      name(std::move(name)),
      in(input_shapes(plan, step)),
      y(vec(plan->tensors()->Get(step->outputs()->Get(0))->shape())),
      cpu(plan->target() && plan->target()->backend() == fb::Backend::CPU),
      plan_(plan),
      problems_(problems) {}

void StepContract::inputs_are(fb::DType dtype) {
  for (uint32_t i : *step->inputs())
    if (tensor(i)->dtype() != dtype) bad("step ", name, " reads a non-float32 tensor");
}

bool StepContract::input_count_is(size_t count) {
  if (in.size() == count) return true;
  bad("step ", name, " has ", in.size(), " inputs");
  return false;
}

}  // namespace jetplan::converter::testing::contract
