// The op tables of the ONNX-coverage groups (support_group_<g>.cc), searched after the core
// table in support.cc. Each returns the check function of an ONNX op type of the default domain,
// or nullptr when its group has none.
#pragma once

#include <string>

#include "converter/src/support.h"

namespace jetplan::converter {

CheckFn find_check_nn(const std::string& op_type);
CheckFn find_check_tensor(const std::string& op_type);
CheckFn find_check_seq(const std::string& op_type);

}  // namespace jetplan::converter
