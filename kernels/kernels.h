// Every op family's parameter struct and CPU twin, for the code that handles all families at
// once (the runtime's prepared-step union and CPU backend, the converter's constant folder, the
// tests). A file about one family includes that family's header instead.
#pragma once

#include "kernels/cpu/cpu_kernels.h"
#include "kernels/cpu/nn_ops.h"
#include "kernels/cpu/seq_quant_ops.h"
#include "kernels/cpu/tensor_ops.h"
#include "kernels/params.h"
#include "kernels/params_nn.h"
#include "kernels/params_quant.h"
#include "kernels/params_seq.h"
#include "kernels/params_tensor.h"
