// Every op family's parameter struct and CPU twin, for the code that handles all families at
// once (the runtime's prepared-step union and CPU backend, the converter's constant folder, the
// tests). A file about one family includes that family's header, kernels/<file>.h, instead.
// One line per row of kernels/op_families.def, in its order.
//
// The CPU twins: plain loops, obviously correct, FP32 unless a family says otherwise; the twins
// every CUDA kernel is checked against and the CPU backend of libjetplan. They allocate nothing,
// never fail (the parameters were validated at plan load), never print and are deterministic
// (reductions run in a fixed order). Pointers are borrowed for the duration of the call;
// optional ones may be null when the matching has_* flag is false. Outputs never alias inputs
// unless stated. A kernel that needs scratch takes a caller-owned workspace of
// *_workspace_bytes(p) bytes, 8-byte aligned, whose contents are undefined before and after the
// call.
#pragma once

#include "kernels/op_family.h"
#include "kernels/conv.h"
#include "kernels/pool.h"
#include "kernels/gemm.h"
#include "kernels/binary.h"
#include "kernels/activation.h"
#include "kernels/softmax.h"
#include "kernels/batch_norm.h"
#include "kernels/concat.h"
#include "kernels/copy.h"
#include "kernels/conv_transpose.h"
#include "kernels/resize.h"
#include "kernels/reduce.h"
#include "kernels/arg_reduce.h"
#include "kernels/top_k.h"
#include "kernels/instance_norm.h"
#include "kernels/layer_norm.h"
#include "kernels/group_norm.h"
#include "kernels/lrn.h"
#include "kernels/nms.h"
#include "kernels/transpose.h"
#include "kernels/slice.h"
#include "kernels/gather.h"
#include "kernels/gather_elements.h"
#include "kernels/pad.h"
#include "kernels/broadcast.h"
#include "kernels/unary.h"
#include "kernels/elementwise.h"
#include "kernels/where.h"
#include "kernels/cast.h"
#include "kernels/rnn.h"
#include "kernels/quantize.h"
#include "kernels/dequantize.h"
#include "kernels/qlinear_matmul.h"
#include "kernels/qlinear_conv.h"
#include "kernels/dynamic_quantize.h"
#include "kernels/pointwise.h"
