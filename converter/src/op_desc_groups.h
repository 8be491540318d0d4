// The attributes of the ONNX-coverage op families, one struct per group, each owned by that
// group's files (support_group_<g>.cc, serialize_group_<g>.cc). Plain data; OpDesc holds one
// of each and only the one of its family's group is meaningful.
#pragma once

#include "converter/src/op_desc_nn.h"
#include "converter/src/op_desc_seq.h"
#include "converter/src/op_desc_tensor.h"
