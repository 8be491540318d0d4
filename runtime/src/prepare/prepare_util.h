// What every family's prepare function checks the same way (prepare/<family>.cc). A plan is
// untrusted: prepare checks a step's arity, dtypes, shapes and attributes against its tensors
// so that the kernel, which trusts its params, never indexes outside a tensor. The messages
// name the step, and the tensor or the attribute at fault.
//
// Every TensorInfo reference returned here points into plan.tensors (owned by the plan, valid
// while it lives); the step's index lists were verified against it by load.
#pragma once

#include <cstdint>
#include <initializer_list>

#include "kernels/kernels.h"
#include "runtime/src/load/plan.h"

namespace jetplan::rt {

// Attribute extents (kernel sizes, strides, pads, LRN size) stay far below int64 overflow.
constexpr int64_t kMaxWindow = int64_t{1} << 31;

inline const TensorInfo& input_at(const jp_plan& plan, const PreparedStep& s, uint32_t i) {
  return plan.tensors[s.inputs->Get(i)];
}

inline const TensorInfo& output_at(const jp_plan& plan, const PreparedStep& s, uint32_t i) {
  return plan.tensors[s.outputs->Get(i)];
}

// kernels::DType numbers its values as fb::DType (static_assert'ed in prepare_util.cc).
inline kernels::DType kernel_dtype(fb::DType t) {
  return static_cast<kernels::DType>(static_cast<int>(t));
}

bool same_shape(const TensorInfo& a, const TensorInfo& b);

// The step's kernel params of one family, reset to their defaults before prepare fills them:
// `kernels::ConvParams& k = fresh_params(&s->params.conv);`.
template <typename Params>
Params& fresh_params(Params* params) {
  *params = Params{};
  return *params;
}

// The Verifier checks a vector's 4-byte length prefix only: 8-byte elements of a corrupt plan can
// sit misaligned, and reading them would be undefined behaviour.
template <typename T>
bool aligned(const flatbuffers::Vector<T>* list) {
  return reinterpret_cast<uintptr_t>(list->data()) % alignof(T) == 0;
}

// ---------------------------------------------------------------------------- errors, arity

// JP_ERROR_INVALID_PLAN: "step '<name>': <what>".
[[nodiscard]] Status invalid(const PreparedStep& s, const char* what);

// An enum value of the plan (an op, a mode, a kind) in [0, count), else
// JP_ERROR_UNSUPPORTED "step '<name>': unknown <what> <value>".
[[nodiscard]] Status check_enum_value(const PreparedStep& s, int value, int count,
                                      const char* what);
// check_enum_value of a schema enum whose kernels:: mirror has `Count` values, numbered alike
// (the count is checked here, at compile time): a value that passes casts to the mirror.
template <int Count, typename E>
[[nodiscard]] Status check_enum(const PreparedStep& s, E value, const char* what) {
  static_assert(Count == static_cast<int>(E::MAX) + 1, "the kernels' enum must mirror the schema's");
  return check_enum_value(s, static_cast<int>(value), Count, what);
}

// Exactly `inputs` inputs and `outputs` outputs.
[[nodiscard]] Status check_arity(const PreparedStep& s, const char* family, uint32_t inputs,
                                 uint32_t outputs);
// min_inputs..max_inputs inputs and one output (the families of fixed-form steps).
[[nodiscard]] Status check_input_range(const PreparedStep& s, const char* family,
                                       uint32_t min_inputs, uint32_t max_inputs);
// check_input_range(s, family, inputs, inputs), then check_float32: the float steps of a fixed
// input count.
[[nodiscard]] Status check_float_inputs(const jp_plan& plan, const PreparedStep& s,
                                        const char* family, uint32_t inputs);
// check_arity(s, family, inputs, outputs), then check_all_float32.
[[nodiscard]] Status check_all_float_arity(const jp_plan& plan, const PreparedStep& s,
                                           const char* family, uint32_t inputs,
                                           uint32_t outputs);
// Exactly the counts the step's params imply (its has_* flags): the message says so.
[[nodiscard]] Status check_arity_of_params(const PreparedStep& s, const char* family,
                                           uint32_t inputs, uint32_t outputs);

// ------------------------------------------------------------------------------------ dtypes

// Every input and output 0 share one float dtype: Float32 (the CPU kernels are FP32), or in CUDA
// plans Float16 too (FP16 storage, FP32 arithmetic).
[[nodiscard]] Status check_float32(const jp_plan& plan, const PreparedStep& s);
// check_float32, and every further output of that dtype too.
[[nodiscard]] Status check_all_float32(const jp_plan& plan, const PreparedStep& s);
// check_float32, except that in CUDA plans a Float16 step may write a Float32 output: the
// output-cast epilogue of the Conv and Gemm kernels (their variant rows say which do).
[[nodiscard]] Status check_float_epilogue(const jp_plan& plan, const PreparedStep& s);
// Conv and Gemm: exactly their two operands, then the third input (bias, C) and the residual
// where the params have them (check_input_range of that count), then check_float_epilogue.
[[nodiscard]] Status check_epilogue_inputs(const jp_plan& plan, const PreparedStep& s,
                                           const char* family, bool has_third, bool has_residual);
// `t` is `want`, as the CPU kernel computes it: UNSUPPORTED for a float the backend does not
// compute in, INVALID_PLAN for a wrong index (Int64) tensor.
[[nodiscard]] Status check_kernel_dtype(const PreparedStep& s, const TensorInfo& t, fb::DType want);
// check_arity for one input per entry of `inputs` and one output per entry of `outputs`, then
// check_kernel_dtype of each input and each output against its entry, in that order.
[[nodiscard]] Status check_kernel_dtypes(const jp_plan& plan, const PreparedStep& s,
                                         const char* family,
                                         std::initializer_list<fb::DType> inputs,
                                         std::initializer_list<fb::DType> outputs);
// `t`, the step's `role` ("scale", "Y_h", ...), is `want` (INVALID_PLAN).
[[nodiscard]] Status check_role_dtype(const PreparedStep& s, const TensorInfo& t, fb::DType want,
                                      const char* role);
// Data movement keeps the dtype: the output's must be the input's.
[[nodiscard]] Status check_same_dtype(const PreparedStep& s, const TensorInfo& x,
                                      const TensorInfo& y);
// A data movement step of one input and one output (check_arity) that keeps its dtype
// (check_same_dtype).
[[nodiscard]] Status check_moves_one(const jp_plan& plan, const PreparedStep& s,
                                     const char* family);

// ------------------------------------------------------------------------------------ shapes

// `t` has `want` elements, else invalid(s, what).
[[nodiscard]] Status check_elements(const PreparedStep& s, const TensorInfo& t, int64_t want,
                                    const char* what);
// `t`, the step's `role`, has `want` elements; the message gives both counts.
[[nodiscard]] Status check_role_elements(const PreparedStep& s, const TensorInfo& t,
                                         uint64_t want, const char* role);
// `t`'s dims are exactly `want` (rank included); the message states the shape the step needs.
[[nodiscard]] Status check_dims(const PreparedStep& s, const TensorInfo& t, int32_t rank,
                                const int64_t* want, const char* role);

// axis in [-rank, rank) -> [0, rank), or -1.
int32_t normalize_axis(int32_t axis, int32_t rank);
// x viewed as [outer, dims[axis], inner].
void split_at(const TensorInfo& x, int32_t axis, int64_t* outer, int64_t* inner);

// Inputs 1 and 2 (a normalization's scale and bias) have `count` elements each, else
// invalid(s, what).
[[nodiscard]] Status check_scale_bias(const jp_plan& plan, const PreparedStep& s, int64_t count,
                                      const char* what);

// A normalization's epsilon, finite, into *out.
[[nodiscard]] Status read_epsilon(const PreparedStep& s, float epsilon, float* out);
// The tail of InstanceNorm and GroupNorm: read_epsilon, then the fused activation (to_activation).
[[nodiscard]] Status read_epsilon_activation(const PreparedStep& s, float epsilon,
                                             const fb::Activation* activation, float* epsilon_out,
                                             kernels::Activation* activation_out);

// Conv and Gemm: where the step has a residual, its input `index` has the output's shape and
// layout, else invalid(s, what).
[[nodiscard]] Status check_residual(const jp_plan& plan, const PreparedStep& s, bool has_residual,
                                    uint32_t index, const char* what);

// Conv and ConvTranspose writing a channel slice of a Concat's y in place: where the step has a
// residual, its input `index` is dense, NHWC, y's shape with the step's own out_channels.
[[nodiscard]] Status check_slice_residual(const jp_plan& plan, const PreparedStep& s,
                                          bool has_residual, uint32_t index,
                                          int64_t out_channels);

// Instance, group norm and LRN: x [N, C, ...] (input 0) and output 0 of its shape.
[[nodiscard]] Status read_channels(const jp_plan& plan, const PreparedStep& s, int64_t* batch,
                                   int64_t* channels, int64_t* spatial);

// Channels-last tensors: a 3- to 5-D tensor stored [N, *spatial, C] (GPU plans).
inline bool channels_last(const TensorInfo& t) { return t.layout == fb::Layout::NHWC; }
inline int64_t channel_dim(const TensorInfo& t) {
  return channels_last(t) ? t.dims[t.rank - 1] : t.dims[1];
}

// --------------------------------------------------------------------------------- broadcast

// Right-aligns each of `count` operands to the output y (rank 0 runs as rank 1 of one element):
// strides[n] gets operand n's dense strides, 0 where a dim of 1 broadcasts; *rank and out_dims
// the output's. Fails unless every operand broadcasts to y and y is exactly their broadcast.
[[nodiscard]] Status broadcast_operands(const PreparedStep& s, const TensorInfo& y,
                                        const TensorInfo* const* operands,
                                        int64_t* const* strides, int count, int32_t* rank,
                                        int64_t* out_dims);

// A matrix operand of a batched product with output y ([*batch, M, N]): its batch dims either
// equal y's (right-aligned, leading 1s added) and *stride = `matrix` (its elements per matrix),
// or are all 1 (one matrix serves every batch) and *stride = 0. False otherwise.
bool matmul_batch_stride(const TensorInfo& t, const TensorInfo& y, int64_t matrix,
                         int64_t* stride);

// -------------------------------------------------------------------------------- attributes

// Spatial attributes (kernel, stride, dilation, pads): `rank` entries within
// [min_value, kMaxWindow]. Absent lists take `fallback`; so do the entries past `rank`, up to
// kernels::kMaxSpatial: every caller passes the neutral value as fallback (1 for kernel, stride
// and dilation, 0 for pads), which is what the kernels read in a dim the step does not have.
[[nodiscard]] Status read_spatial(const PreparedStep& s, const char* what,
                                  const flatbuffers::Vector<int64_t>* list, int32_t rank,
                                  int64_t fallback, int64_t min_value, int64_t* out);

// The fused activation of a step (absent: none).
[[nodiscard]] Status to_activation(const PreparedStep& s, const fb::Activation* in,
                                   kernels::Activation* out);

// The kernels that keep indices in their workspace (TopK, NMS) index tensors with them: the
// workspace must be large enough and share no byte with the step's own arena tensors, which
// the kernel writes while it still reads the indices.
[[nodiscard]] Status check_workspace(const jp_plan& plan, const PreparedStep& s, int64_t need);

}  // namespace jetplan::rt
