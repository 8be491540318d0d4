// Turns a user's input file (.npy, an image, or raw bytes) into the exact bytes a plan input
// takes, or says precisely why it cannot.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "jetplan/jetplan.h"
#include "npy.h"

namespace jetplan::tools {

bool load_input_file(const std::string& path, const jp_tensor_desc& desc,
                     std::vector<uint8_t>* bytes, std::string* error);

}  // namespace jetplan::tools
