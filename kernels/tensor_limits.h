// The fixed capacities of the parameter structs: they hold every shape inline (no pointers), so
// the largest rank, spatial rank and input count are compile-time constants.
#pragma once

namespace jetplan::kernels {

constexpr int kMaxRank = 8;           // dims of a tensor (per-dim arrays of the params)
constexpr int kMaxSpatial = 3;        // spatial dims of a Conv, Pool or ConvTranspose window
constexpr int kMaxConcatInputs = 64;  // inputs of one Concat, the most any step takes

}  // namespace jetplan::kernels
