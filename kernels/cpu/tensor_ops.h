// CPU reference kernels of the tensor ops (kernels/params_tensor.h): plain loops, obviously
// correct, the twins the CUDA kernels are checked against. Same rules as cpu_kernels.h: they
// allocate nothing, never fail, never print and are deterministic. Pointers are borrowed for the
// call; tensors are dense unless their strides say otherwise; outputs never alias inputs. Data
// pointers are void because the element type is a parameter (elem_bytes or a DType).
#pragma once

#include "kernels/params_tensor.h"

namespace jetplan::kernels::cpu {

void transpose(const TransposeParams& p, const void* x, void* y);
void slice(const SliceParams& p, const void* x, void* y);
// indices: num_indices entries of p.index_dtype.
void gather(const GatherParams& p, const void* data, const void* indices, void* y);
// indices: entries of p.index_dtype with the shape out_dims.
void gather_elements(const GatherElementsParams& p, const void* data, const void* indices, void* y);
void pad(const PadParams& p, const void* x, void* y);
void broadcast(const BroadcastParams& p, const void* x, void* y);
void where(const WhereParams& p, const unsigned char* cond, const void* x, const void* y,
           void* out);

// Pairs that unary_supported / elementwise_supported reject are refused at plan load; given
// one anyway, these write nothing.
void unary(const UnaryParams& p, const void* x, void* y);
void elementwise(const ElementwiseParams& p, const void* a, const void* b, void* y);
// Float32 unary math on one value (the op must be a float32 -> float32 one); lets a fused
// pointwise chain apply the same formula as the standalone kernel.
float apply_unary(UnaryOp op, float x);

// y may not alias x, even when both dtypes have the same size.
void cast(const CastParams& p, const void* x, void* y);

}  // namespace jetplan::kernels::cpu
