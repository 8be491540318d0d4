// Turns a user's input file (.npy, an image, or raw bytes) into the exact bytes a plan input
// takes, or says precisely why it cannot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"

namespace jetplan::tools {

std::string shape_string(const int64_t* dims, int32_t rank);
const char* dtype_name(jp_dtype dtype);
// The .npy dtype a binding reads and writes. numpy has no bfloat16: a BFloat16 binding takes
// and gives its raw bit patterns as uint16 ("<u2"; x.view(np.uint32) >> 16 of a float32 x
// truncates to them, (b.astype(np.uint32) << 16).view(np.float32) decodes them).
const char* npy_descr(jp_dtype dtype);

bool load_input_file(const std::string& path, const jp_tensor_desc& desc,
                     std::vector<uint8_t>* bytes, std::string* error);

}  // namespace jetplan::tools
