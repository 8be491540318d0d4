// ONNX arithmetic as plan steps (see arithmetic.h).
#include "converter/src/ops/arithmetic.h"

namespace jetplan::converter::ops {

ArithWay arith_way(const std::string&, DataType dtype, DataType* compute) {
  *compute = dtype;
  switch (dtype) {
    case DataType::kFloat32:
      return ArithWay::kBinary;
    case DataType::kFloat16:
      *compute = DataType::kFloat32;
      return ArithWay::kBinary;
    case DataType::kInt32:
    case DataType::kInt64:
    case DataType::kInt16:
    case DataType::kUInt16:
    case DataType::kUInt32:
    case DataType::kUInt64:
    case DataType::kFloat64:
      return ArithWay::kElementwise;
    case DataType::kInt8:
    case DataType::kUInt8:
      *compute = DataType::kInt32;
      return ArithWay::kElementwise;
    default:
      return ArithWay::kNone;
  }
}

namespace {

// The plan ops of ONNX arithmetic but Add, Sum and Mean (which are Add).
struct ArithOp {
  const char* name;
  fb::BinaryOp binary;
  fb::ElementwiseOp elementwise;
};
constexpr ArithOp kArithOps[] = {
    {"Sub", fb::BinaryOp::Sub, fb::ElementwiseOp::Sub},
    {"Mul", fb::BinaryOp::Mul, fb::ElementwiseOp::Mul},
    {"Div", fb::BinaryOp::Div, fb::ElementwiseOp::Div},
    {"Max", fb::BinaryOp::Max, fb::ElementwiseOp::Max},
    {"Min", fb::BinaryOp::Min, fb::ElementwiseOp::Min},
};
constexpr ArithOp kAdd = {"Add", fb::BinaryOp::Add, fb::ElementwiseOp::Add};

const ArithOp& arith_op(const std::string& op) {
  for (const ArithOp& a : kArithOps)
    if (op == a.name) return a;
  return kAdd;
}

}  // namespace

fb::BinaryOp binary_op(const std::string& op) { return arith_op(op).binary; }

fb::ElementwiseOp elementwise_arith_op(const std::string& op) { return arith_op(op).elementwise; }

}  // namespace jetplan::converter::ops
