// CPU run functions of the tensor families: each pulls its tensors from the pointer table
// resolved at context creation and calls the reference kernel. No checks here: prepare_tensor.cc
// verified everything at load.
#include "kernels/kernels.h"
#include "runtime/src/op_families.h"

namespace jetplan::rt {
namespace {

const void* in(const PreparedStep& s, void* const* tensors, uint32_t i) {
  return tensors[s.inputs->Get(i)];
}

void* out(const PreparedStep& s, void* const* tensors) { return tensors[s.outputs->Get(0)]; }

}  // namespace

void run_transpose_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::transpose(s.params.transpose, in(s, tensors, 0), out(s, tensors));
}

void run_slice_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::slice(s.params.slice, in(s, tensors, 0), out(s, tensors));
}

void run_gather_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::gather(s.params.gather, in(s, tensors, 0), in(s, tensors, 1), out(s, tensors));
}

void run_gather_elements_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::gather_elements(s.params.gather_elements, in(s, tensors, 0), in(s, tensors, 1),
                                out(s, tensors));
}

void run_pad_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::pad(s.params.pad, in(s, tensors, 0), out(s, tensors));
}

void run_broadcast_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::broadcast(s.params.broadcast, in(s, tensors, 0), out(s, tensors));
}

void run_unary_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::unary(s.params.unary, in(s, tensors, 0), out(s, tensors));
}

void run_elementwise_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::elementwise(s.params.elementwise, in(s, tensors, 0), in(s, tensors, 1),
                            out(s, tensors));
}

void run_where_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::where(s.params.where, static_cast<const unsigned char*>(in(s, tensors, 0)),
                      in(s, tensors, 1), in(s, tensors, 2), out(s, tensors));
}

void run_cast_cpu(const PreparedStep& s, void* const* tensors, void*) {
  kernels::cpu::cast(s.params.cast, in(s, tensors, 0), out(s, tensors));
}

}  // namespace jetplan::rt
