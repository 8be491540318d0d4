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
const char* npy_descr(jp_dtype dtype);

bool load_input_file(const std::string& path, const jp_tensor_desc& desc,
                     std::vector<uint8_t>* bytes, std::string* error);

}  // namespace jetplan::tools
