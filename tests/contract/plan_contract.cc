#include "tests/contract/plan_contract.h"

#include <iterator>
#include <map>
#include <sstream>

#include "tests/contract/step_contract.h"

namespace jetplan::converter::testing {
namespace {

using contract::count;
using contract::Shape;
using contract::str;
using contract::vec;

// Every family's contract rule, indexed by fb::OpFamily, made from kernels/op_families.def.
constexpr contract::ContractRule kContractRules[] = {
#define JP_OP_FAMILY(Name, file, Params, Backends) &contract::contract_##file,
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};
static_assert(std::size(kContractRules) == static_cast<size_t>(fb::OpFamily::MAX) + 1,
              "kernels/op_families.def and fb::OpFamily list different families");

// The list is in enum order, so kContractRules[op] is op's rule.
constexpr fb::OpFamily kRuleFamilies[] = {
#define JP_OP_FAMILY(Name, file, Params, Backends) fb::OpFamily::Name,
#include "kernels/op_families.def"
#undef JP_OP_FAMILY
};
constexpr bool rules_in_enum_order() {
  for (size_t i = 0; i < std::size(kRuleFamilies); ++i)
    if (static_cast<size_t>(kRuleFamilies[i]) != i) return false;
  return true;
}
static_assert(rules_in_enum_order(), "kernels/op_families.def is not in fb::OpFamily order");

// Bytes per element, read from the schema's DType list. The runtime's loader has its own table:
// this one stays apart on purpose, so that the two readings check each other.
int64_t elem_size(fb::DType t) {
  switch (t) {
    case fb::DType::Float32: return 4;
    case fb::DType::Float16: return 2;
    case fb::DType::Int8: return 1;
    case fb::DType::UInt8: return 1;
    case fb::DType::Int32: return 4;
    case fb::DType::Int64: return 8;
    case fb::DType::Bool: return 1;
    case fb::DType::Float64: return 8;
    case fb::DType::Int16: return 2;
    case fb::DType::UInt16: return 2;
    case fb::DType::UInt32: return 4;
    case fb::DType::UInt64: return 8;
    case fb::DType::BFloat16: return 2;
  }
  return 0;
}

class Checker {
 public:
  Checker(const std::vector<uint8_t>& buf, const fb::Plan* plan) : buf_(buf), p_(plan) {}

  std::vector<std::string> run() {
    if (p_->schema_version() != 1) bad("schema_version ", p_->schema_version());
    if (!p_->target() || !p_->target()->name()) bad("no target");
    if (!p_->tensors() || !p_->steps() || !p_->inputs() || !p_->outputs()) {
      bad("missing tensors, steps or bindings");
      return problems_;
    }
    check_bindings();
    check_tensors();
    check_steps();
    check_liveness();
    return problems_;
  }

 private:
  template <typename... A>
  void bad(A&&... a) {
    std::ostringstream o;
    (o << ... << a);
    problems_.push_back(o.str());
  }

  const fb::Tensor* t(uint32_t i) const { return p_->tensors()->Get(i); }
  Shape shape(uint32_t i) const { return vec(t(i)->shape()); }
  uint32_t n_tensors() const { return p_->tensors()->size(); }

  void check_bindings() {
    for (const auto* list : {p_->inputs(), p_->outputs()}) {
      const bool is_input = list == p_->inputs();
      for (uint32_t i = 0; i < list->size(); ++i) {
        const auto* b = list->Get(i);
        if (!b->name()) bad("binding without a name");
        if (b->tensor() >= n_tensors()) {
          bad("binding ", i, " tensor out of range");
          continue;
        }
        const fb::Tensor* tt = t(b->tensor());
        if (tt->storage() != fb::Storage::Binding || tt->binding() != static_cast<int32_t>(i))
          bad(is_input ? "input " : "output ", i, " tensor is not Binding ", i);
        auto [it, fresh] = bound_.emplace(b->tensor(), is_input);
        if (!fresh) bad("tensor ", b->tensor(), " bound twice");
      }
    }
  }

  void check_tensors() {
    const auto* w = p_->weights();
    const uint64_t weights = w ? w->size() : 0;
    if (w && (w->data() - buf_.data()) % 256 != 0) bad("weights do not start at a multiple of 256");
    for (uint32_t i = 0; i < n_tensors(); ++i) {
      const fb::Tensor* tt = t(i);
      const Shape s = shape(i);
      if (!tt->name()) bad("tensor ", i, " has no name");
      for (int64_t d : s)
        if (d < 0) bad("tensor ", i, " has dim ", d);
      if (static_cast<int64_t>(tt->size_bytes()) != count(s) * elem_size(tt->dtype()))
        bad("tensor ", i, " size_bytes ", tt->size_bytes(), " for ", str(s));
      switch (tt->storage()) {
        case fb::Storage::Weight:
          if (tt->offset() % 256 || tt->offset() + tt->size_bytes() > weights)
            bad("weight tensor ", i, " at ", tt->offset(), "+", tt->size_bytes(), " of ", weights);
          break;
        case fb::Storage::Arena:
          if (tt->offset() % p_->arena_alignment() ||
              tt->offset() + tt->size_bytes() > p_->arena_bytes())
            bad("arena tensor ", i, " at ", tt->offset(), "+", tt->size_bytes(), " of ",
                p_->arena_bytes());
          break;
        case fb::Storage::Binding:
          if (!bound_.count(i)) bad("Binding tensor ", i, " is in no binding");
          break;
      }
      if (tt->view_of() != -1) {
        const int32_t v = tt->view_of();
        const fb::Tensor* of = v >= 0 && static_cast<uint32_t>(v) < n_tensors() ? t(v) : nullptr;
        if (tt->storage() != fb::Storage::Arena || of == nullptr ||
            of->storage() != fb::Storage::Arena || of->view_of() != -1 ||
            of->offset() != tt->offset() || of->size_bytes() < tt->size_bytes())
          bad("view ", i, " of tensor ", v);
      }
      const bool nchw = s.size() == 4 && tt->storage() != fb::Storage::Weight;
      if ((tt->layout() == fb::Layout::NCHW) != nchw) bad("tensor ", i, " layout");
    }
  }

  // One output or more (TopK, Split, the recurrent cells, DynamicQuantize write several).
  bool io_ok(const fb::Step* s) {
    if (!s->inputs() || !s->outputs() || s->outputs()->size() == 0) return false;
    for (uint32_t i : *s->inputs())
      if (i >= n_tensors()) return false;
    for (uint32_t o : *s->outputs())
      if (o >= n_tensors()) return false;
    return true;
  }

  void check_steps() {
    std::vector<int> writer(n_tensors(), -1);
    for (uint32_t k = 0; k < p_->steps()->size(); ++k) {
      const fb::Step* s = p_->steps()->Get(k);
      const std::string name = s->name() ? s->name()->str() : "";
      if (name.empty()) bad("step ", k, " has no name");
      if (s->kernel() && s->kernel()->size() != 0) bad("step ", name, " names a kernel");
      // A workspace (TopK, Nms, Rnn) is arena bytes at an aligned offset; no workspace, offset 0.
      if (s->workspace_bytes() == 0 ? s->workspace_offset() != 0
                                    : s->workspace_offset() % p_->arena_alignment() != 0 ||
                                          s->workspace_offset() + s->workspace_bytes() >
                                              p_->arena_bytes())
        bad("step ", name, " workspace");
      if (const auto* l = s->launch())
        if (l->grid_x() || l->grid_y() || l->grid_z() || l->block_x() || l->block_y() ||
            l->block_z() || l->shared_bytes() || l->split_k())
          bad("step ", name, " launch not zero");
      if (!io_ok(s)) {
        bad("step ", name, " inputs/outputs out of range");
        continue;
      }
      for (uint32_t i : *s->inputs()) {
        const fb::Tensor* in = t(i);
        if (in->storage() == fb::Storage::Arena && writer[bytes_of(i)] < 0)
          bad("step ", name, " reads arena tensor ", i, " before any step writes it");
        if (in->storage() == fb::Storage::Binding && !bound_.at(i) && writer[i] < 0)
          bad("step ", name, " reads output ", i, " before it is written");
      }
      for (uint32_t out : *s->outputs()) {
        if (t(out)->storage() == fb::Storage::Weight ||
            (t(out)->storage() == fb::Storage::Binding && bound_.at(out)))
          bad("step ", name, " writes a weight or an input");
        if (t(out)->view_of() != -1) bad("step ", name, " writes view ", out);
        if (writer[out] >= 0) bad("tensor ", out, " written twice");
        writer[out] = static_cast<int>(k);
      }
      check_family(s, name);
      for (uint32_t i : *s->inputs()) touch(i, k);
      for (uint32_t out : *s->outputs()) touch(out, k);
    }
    for (uint32_t i = 0; i < n_tensors(); ++i)
      if (bound_.count(i) && !bound_.at(i) && writer[i] < 0 && t(i)->size_bytes() != 0)
        bad("output tensor ", i, " never written");  // an empty one has nothing to write
  }

  // The tensor whose bytes `i` reads: its view_of for a view (checked in check_tensors).
  uint32_t bytes_of(uint32_t i) {
    const int32_t v = t(i)->view_of();
    return v >= 0 && static_cast<uint32_t>(v) < n_tensors() ? static_cast<uint32_t>(v) : i;
  }

  // A view keeps the tensor it reads live.
  void touch(uint32_t i, uint32_t step) {
    if (t(i)->storage() != fb::Storage::Arena) return;
    i = bytes_of(i);
    auto [it, fresh] = live_.emplace(i, std::pair<uint32_t, uint32_t>{step, step});
    if (!fresh) it->second.second = step;
  }

  void check_liveness() {
    for (auto a = live_.begin(); a != live_.end(); ++a)
      for (auto b = std::next(a); b != live_.end(); ++b) {
        const bool same_time =
            a->second.first <= b->second.second && b->second.first <= a->second.second;
        const fb::Tensor *ta = t(a->first), *tb = t(b->first);
        const bool same_bytes = ta->offset() < tb->offset() + tb->size_bytes() &&
                                tb->offset() < ta->offset() + ta->size_bytes();
        if (same_time && same_bytes)
          bad("arena tensors ", a->first, " and ", b->first, " are live together and overlap");
      }
  }

  // The step's family rule; an op value past the schema's (a corrupt or newer plan) has none.
  void check_family(const fb::Step* s, const std::string& name) {
    if (!has_contract_rule(s->op()))
      return bad("step ", name, ": op family ", fb::EnumNameOpFamily(s->op()), " is not checked");
    contract::StepContract step(p_, s, name, &problems_);
    kContractRules[static_cast<size_t>(s->op())](step);
  }

  const std::vector<uint8_t>& buf_;
  const fb::Plan* p_;
  std::vector<std::string> problems_;
  std::map<uint32_t, bool> bound_;  // tensor -> is an input binding
  std::map<uint32_t, std::pair<uint32_t, uint32_t>> live_;
};

}  // namespace

bool has_contract_rule(fb::OpFamily op) {
  return static_cast<size_t>(op) < std::size(kContractRules) &&
         kContractRules[static_cast<size_t>(op)] != nullptr;
}

const fb::Plan* read_plan(const std::vector<uint8_t>& buffer) {
  flatbuffers::Verifier verifier(buffer.data(), buffer.size());
  if (!fb::VerifyPlanBuffer(verifier)) return nullptr;
  return fb::GetPlan(buffer.data());
}

std::vector<int64_t> tensor_shape(const fb::Plan* plan, uint32_t index) {
  return vec(plan->tensors()->Get(index)->shape());
}

std::vector<std::string> plan_contract_problems(const std::vector<uint8_t>& buffer) {
  const fb::Plan* plan = read_plan(buffer);
  if (plan == nullptr) return {"the buffer does not verify as a Plan"};
  return Checker(buffer, plan).run();
}

}  // namespace jetplan::converter::testing
