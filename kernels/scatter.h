// The Scatter family: ONNX ScatterElements (and the deprecated Scatter, its opset 9-10 form)
// and ScatterND: parameters and CPU twin (kernels/cpu/scatter.cc); CUDA kernel in
// kernels/cuda/scatter.cu (deterministic: the same updates in the same order as the twin).
#pragma once

#include <cstdint>

#include "kernels/dtype.h"
#include "kernels/tensor_limits.h"

namespace jetplan::kernels {

// How an update meets the element it lands on: replaces it, or adds, multiplies, or keeps the
// larger or smaller (a NaN on either side gives NaN, as numpy's maximum and minimum). Integers
// wrap (two's complement); Float16 computes in float32 and rounds after every update.
enum class ScatterReduction : uint8_t { kNone = 0, kAdd = 1, kMul = 2, kMax = 3, kMin = 4 };

// y = data, then every update applied in row-major order of its position (with duplicate
// indices and kNone the last one wins: deterministic, where ONNX leaves the order open).
// Indices are int32 or int64; a negative one counts from the end of its dim; an update whose
// index lies outside the dim even then is skipped (ONNX calls such a model invalid: the converter
// refuses constant ones, and a run never writes out of bounds).
//   ScatterElements (nd false): indices and updates of one shape (index_dims), of data's rank,
//     no larger than data off the axis; the update at coordinate c lands on c with c[axis]
//     replaced by indices[c].
//   ScatterND (nd true): indices [i_0 .. i_{q-2}, k] (index_rank q >= 1, 1 <= k <= rank);
//     updates [i_0 .. i_{q-2}, data_dims[k] .. data_dims[rank - 1]]: each index tuple names the
//     slice of data's trailing rank - k dims that its update meets element by element.
struct ScatterParams {
  bool nd = false;
  // ScatterND whose index tuples name strictly increasing offsets of data (the converter sets it
  // for constant indices it has checked or sorted): the CUDA kernel binary-searches the tuples
  // instead of walking them all. The twin ignores it (the order is the same either way); a plan
  // that sets it falsely gets wrong values, never an access outside a tensor.
  bool sorted = false;
  ScatterReduction reduction = ScatterReduction::kNone;
  int32_t rank = 0;  // data's, >= 1
  int32_t axis = 0;  // ScatterElements: a dim of data
  DType dtype = DType::kFloat32;  // data's; reductions compute in it
  int64_t elem_bytes = 4;
  DType index_dtype = DType::kInt64;
  int32_t index_rank = 0;
  int64_t data_dims[kMaxRank] = {};
  int64_t index_dims[kMaxRank] = {};
};

// Whether `r` computes on elements of `t` (kNone moves bytes of any dtype; the others need
// float16, float32, float64, int32 or int64).
bool scatter_reduces(ScatterReduction r, DType t);

// The CUDA kernel's walk: how many index entries each output element's thread reads
// (ScatterElements: index_dims[axis]; ScatterND: every tuple's k entries, or k per step of a
// binary search when sorted). Selection bounds
// output elements x walk by kScatterMaxWalk (kernels/cuda/scatter_select.cc).
uint64_t scatter_walk_reads(const ScatterParams& p);
constexpr uint64_t kScatterMaxWalk = uint64_t(1) << 30;

// Checks data's, indices' and updates' shapes against p's nd and axis (already set) and fills
// p's rank, data_dims, index_rank and index_dims. Returns nullptr, or why the shapes do not fit.
const char* scatter_shapes(ScatterParams* p, int32_t rank, const int64_t* data_dims,
                           int32_t index_rank, const int64_t* index_dims, int32_t updates_rank,
                           const int64_t* updates_dims);

}  // namespace jetplan::kernels

namespace jetplan::kernels::cpu {

// data and y hold data_dims elements (y may be data itself), indices index_dims entries of
// p.index_dtype, updates the shape scatter_shapes checked.
void scatter(const ScatterParams& p, const void* data, const void* indices, const void* updates,
             void* y);

}  // namespace jetplan::kernels::cpu

// CUDA kernel of kernels/cuda/scatter.cu, gathered into the variant table by
// kernels/cuda/variants.cc: one thread per output element, every dtype.
#define JP_CUDA_VARIANTS_scatter(X, F) X(F, jp_scatter, kAny, 0)
