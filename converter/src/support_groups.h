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

// For SUPPORTED_OPS.md: the element types an op's steps take and the restrictions its check
// function enforces, one line each (static strings).
struct OpDoc {
  const char* dtypes = "";
  const char* notes = "";
};
// False when the group has no row for the op.
bool find_doc_nn(const std::string& op_type, OpDoc* doc);
bool find_doc_tensor(const std::string& op_type, OpDoc* doc);  // support_group_tensor_doc.cc
bool find_doc_seq(const std::string& op_type, OpDoc* doc);

}  // namespace jetplan::converter
