// jetplan-inspect: prints what a plan holds (target, metadata, bindings, steps with their tensors
// and parameters, arena and weights). The plan is verified by the runtime's loader first, so a
// corrupt plan is reported, not walked.
#include <cinttypes>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"
#include "jetplan/plan_generated.h"

namespace {

namespace fb = jetplan::fb;

std::string shape_of(const fb::Tensor* t) {
  std::string s = "[";
  for (uint32_t i = 0; t->shape() && i < t->shape()->size(); ++i) {
    if (i) s += ",";
    s += std::to_string(t->shape()->Get(i));
  }
  return s + "]";
}

std::string where(const fb::Tensor* t) {
  switch (t->storage()) {
    case fb::Storage::Arena:
      return "arena@" + std::to_string(t->offset()) +
             (t->view_of() != -1 ? " (view of tensor " + std::to_string(t->view_of()) + ")" : "");
    case fb::Storage::Weight: return "weight@" + std::to_string(t->offset());
    case fb::Storage::Binding: return "binding " + std::to_string(t->binding());
  }
  return "?";
}

std::string tensor_list(const fb::Plan* plan, const flatbuffers::Vector<uint32_t>* list) {
  std::string s;
  for (uint32_t i = 0; list && i < list->size(); ++i) {
    const fb::Tensor* t = plan->tensors()->Get(list->Get(i));
    if (i) s += ", ";
    s += "'" + t->name()->str() + "' " + shape_of(t) + " " + fb::EnumNameDType(t->dtype()) + " " +
         where(t);
  }
  return s;
}

template <typename T>
std::string longs(const flatbuffers::Vector<T>* v) {  // "1,2,3"; "-" when absent
  if (v == nullptr) return "-";
  std::string s;
  for (uint32_t i = 0; i < v->size(); ++i) s += (i ? "," : "") + std::to_string(v->Get(i));
  return s;
}

std::string activation(const fb::Activation* a) {
  if (a == nullptr || a->kind() == fb::ActivationKind::None) return "";
  return std::string(" act=") + fb::EnumNameActivationKind(a->kind());
}

// The parameters of the core families in words; other families show their params table name.
std::string params_of(const fb::Step* s) {
  if (const auto* p = s->params_as_ConvParams()) {
    return "kernel=" + longs(p->kernel()) + " stride=" + longs(p->stride()) +
           " dilation=" + longs(p->dilation()) + " pads=" + longs(p->pad_begin()) + "/" +
           longs(p->pad_end()) + " groups=" + std::to_string(p->groups()) +
           (p->has_bias() ? " bias" : "") + (p->has_residual() ? " residual" : "") +
           (p->has_residual() && p->residual_after_activation() ? " after activation" : "") +
           activation(p->activation());
  }
  if (const auto* p = s->params_as_PoolParams()) {
    return std::string(fb::EnumNamePoolKind(p->kind())) + " kernel=" + longs(p->kernel()) +
           " stride=" + longs(p->stride()) + " pads=" + longs(p->pad_begin()) + "/" +
           longs(p->pad_end()) + (p->ceil_mode() ? " ceil" : "");
  }
  if (const auto* p = s->params_as_GemmParams()) {
    return std::string(p->trans_a() ? "A^T " : "") + (p->trans_b() ? "B^T " : "") +
           "alpha=" + std::to_string(p->alpha()) + " beta=" + std::to_string(p->beta()) +
           (p->has_c() ? " C" : "") + (p->has_residual() ? " R" : "") +
           activation(p->activation());
  }
  if (const auto* p = s->params_as_BinaryParams()) {
    return std::string(fb::EnumNameBinaryOp(p->op())) + activation(p->activation());
  }
  if (const auto* p = s->params_as_ActivationParams()) return activation(p->activation());
  if (const auto* p = s->params_as_SoftmaxParams()) {
    return "axis=" + std::to_string(p->axis()) + (p->log() ? " log" : "");
  }
  if (const auto* p = s->params_as_BatchNormParams()) {
    return "epsilon=" + std::to_string(p->epsilon());
  }
  if (const auto* p = s->params_as_ConcatParams()) return "axis=" + std::to_string(p->axis());
  if (const auto* p = s->params_as_PointwiseParams()) {
    // The program as assignments: "r0=in0 r1=in1 r2=Mul(r0,r1) r3=Sigmoid(r2)".
    std::string text;
    const auto reg = [](int r) { return "r" + std::to_string(r); };
    for (uint32_t i = 0; p->program() != nullptr && i < p->program()->size(); ++i) {
      const fb::PointwiseInstr& in = *p->program()->Get(i);
      text += (i ? " " : "") + reg(static_cast<int>(i)) + "=";
      // A kind this build does not know (the plan is read here unverified) prints as "?".
      std::string op = "?";
      switch (in.kind()) {
        case fb::PointwiseInstrKind::Load: op = "in" + std::to_string(in.op()); break;
        case fb::PointwiseInstrKind::Binary:
          op = std::string(fb::EnumNameBinaryOp(static_cast<fb::BinaryOp>(in.op()))) + "(" +
               reg(in.a()) + "," + reg(in.b()) + ")";
          break;
        case fb::PointwiseInstrKind::Unary:
          op = std::string(fb::EnumNameUnaryOp(static_cast<fb::UnaryOp>(in.op()))) + "(" +
               reg(in.a()) + ")";
          break;
        case fb::PointwiseInstrKind::Activation:
          op = std::string(fb::EnumNameActivationKind(in.activation().kind())) + "(" +
               reg(in.a()) + ")";
          break;
      }
      text += op;
    }
    return text;
  }
  if (const auto* p = s->params_as_AttentionParams()) {
    // Enough to restate the step elsewhere (tests/perf/perf_layers.py): O's axes (absent: its
    // own order) give batch, heads, queries and head dim; K's view or axes the keys.
    std::string text = "scale=" + std::to_string(p->scale()) + (p->causal() ? " causal" : "") +
                       (p->has_mask() ? " mask" : "");
    if (p->o_axes() != nullptr) text += " o_axes=" + longs(p->o_axes());
    if (p->k_axes() != nullptr) text += " k_axes=" + longs(p->k_axes());
    if (p->k_view() != nullptr) text += " k_seq_len=" + std::to_string(p->k_view()->seq_len());
    return text;
  }
  if (s->params_type() == fb::StepParams::CopyParams) return "";
  return std::string("(") + fb::EnumNameStepParams(s->params_type()) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 || argv[1][0] == '-') {
    std::fprintf(stderr, "usage: jetplan-inspect PLAN.jplan\n");
    return 2;
  }
  std::ifstream file(argv[1], std::ios::binary);
  if (!file) {
    std::fprintf(stderr, "jetplan-inspect: error: cannot open plan file '%s'\n", argv[1]);
    return 1;
  }
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                   std::istreambuf_iterator<char>());
  // Verified in full, without touching a GPU: GPU plans are inspected on any machine.
  jp_plan* verified = nullptr;
  if (jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY | JP_LOAD_NO_DEVICE,
                          &verified) != JP_OK) {
    std::fprintf(stderr, "jetplan-inspect: error: %s: %s\n", argv[1], jp_last_error());
    return 1;
  }
  const size_t arena = jp_plan_arena_bytes(verified);
  jp_plan_destroy(verified);
  const fb::Plan* plan = fb::GetPlan(bytes.data());

  const fb::Target* target = plan->target();
  std::printf("plan %s: schema %u, %zu bytes\n", argv[1], plan->schema_version(), bytes.size());
  std::printf("target: %s (%s, sm_%u)\n", target->name() ? target->name()->c_str() : "",
              fb::EnumNameBackend(target->backend()), target->sm_arch());
  if (const fb::Metadata* m = plan->metadata()) {
    std::printf("converted by jetplan-convert %s from %s (sha256 %s)\n",
                m->converter_version() ? m->converter_version()->c_str() : "?",
                m->source_name() ? m->source_name()->c_str() : "?",
                m->source_sha256() ? m->source_sha256()->c_str() : "?");
    for (uint32_t i = 0; m->options() && i < m->options()->size(); ++i) {
      const fb::KeyValue* kv = m->options()->Get(i);
      std::printf("  option %s = %s\n", kv->key()->c_str(), kv->value() ? kv->value()->c_str() : "");
    }
  }
  for (uint32_t i = 0; i < plan->inputs()->size(); ++i) {
    const fb::Tensor* t = plan->tensors()->Get(plan->inputs()->Get(i)->tensor());
    std::printf("input %u '%s': %s %s\n", i, plan->inputs()->Get(i)->name()->c_str(),
                shape_of(t).c_str(), fb::EnumNameDType(t->dtype()));
  }
  for (uint32_t i = 0; i < plan->outputs()->size(); ++i) {
    const fb::Tensor* t = plan->tensors()->Get(plan->outputs()->Get(i)->tensor());
    std::printf("output %u '%s': %s %s\n", i, plan->outputs()->Get(i)->name()->c_str(),
                shape_of(t).c_str(), fb::EnumNameDType(t->dtype()));
  }
  std::printf("arena %zu bytes (alignment %u), weights %u bytes, %u tensors, %u steps\n", arena,
              plan->arena_alignment(), plan->weights() ? plan->weights()->size() : 0,
              plan->tensors()->size(), plan->steps()->size());
  for (uint32_t i = 0; i < plan->steps()->size(); ++i) {
    const fb::Step* s = plan->steps()->Get(i);
    std::printf("step %u '%s' %s %s\n    in:  %s\n    out: %s\n", i,
                s->name() ? s->name()->c_str() : "", fb::EnumNameOpFamily(s->op()),
                params_of(s).c_str(), tensor_list(plan, s->inputs()).c_str(),
                tensor_list(plan, s->outputs()).c_str());
    if (s->kernel() != nullptr && s->kernel()->size() > 0) {
      const fb::LaunchConfig* l = s->launch();
      std::printf("    kernel %s grid %ux%ux%u block %ux%ux%u shared %u split_k %u workspace %llu\n",
                  s->kernel()->c_str(), l ? l->grid_x() : 0, l ? l->grid_y() : 0,
                  l ? l->grid_z() : 0, l ? l->block_x() : 0, l ? l->block_y() : 0,
                  l ? l->block_z() : 0, l ? l->shared_bytes() : 0, l ? l->split_k() : 0,
                  static_cast<unsigned long long>(s->workspace_bytes()));
    }
  }
  return 0;
}
