// Prepare and CPU run functions of the nn families (rows in families_nn.inc).
#pragma once

#include "runtime/src/plan.h"

namespace jetplan::rt {

// prepare_nn.cc: load-time checks of each step against its tensors, then its kernel params.
Status prepare_conv_transpose(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_resize(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_reduce(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_arg_reduce(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_top_k(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_instance_norm(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_layer_norm(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_group_norm(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_lrn(const jp_plan&, const fb::Step&, PreparedStep*);
Status prepare_nms(const jp_plan&, const fb::Step&, PreparedStep*);

// backend_cpu_nn.cc
void run_conv_transpose_cpu(const PreparedStep&, void* const*, void*);
void run_resize_cpu(const PreparedStep&, void* const*, void*);
void run_reduce_cpu(const PreparedStep&, void* const*, void*);
void run_arg_reduce_cpu(const PreparedStep&, void* const*, void*);
void run_top_k_cpu(const PreparedStep&, void* const*, void*);
void run_instance_norm_cpu(const PreparedStep&, void* const*, void*);
void run_reduce_f64_cpu(const PreparedStep&, void* const*, void*);  // Float64, chosen by prepare
void run_layer_norm_cpu(const PreparedStep&, void* const*, void*);  // y, or y, mean, inv_std_dev
void run_layer_norm_mean_cpu(const PreparedStep&, void* const*, void*);         // y, mean
void run_layer_norm_inv_std_dev_cpu(const PreparedStep&, void* const*, void*);  // y, inv_std_dev
void run_group_norm_cpu(const PreparedStep&, void* const*, void*);
void run_lrn_cpu(const PreparedStep&, void* const*, void*);
void run_nms_cpu(const PreparedStep&, void* const*, void*);

}  // namespace jetplan::rt
