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

fb::BinaryOp binary_op(const std::string& op) {
  if (op == "Sub") return fb::BinaryOp::Sub;
  if (op == "Mul") return fb::BinaryOp::Mul;
  if (op == "Div") return fb::BinaryOp::Div;
  if (op == "Max") return fb::BinaryOp::Max;
  if (op == "Min") return fb::BinaryOp::Min;
  return fb::BinaryOp::Add;  // Add, Sum, Mean
}

fb::ElementwiseOp elementwise_arith_op(const std::string& op) {
  if (op == "Sub") return fb::ElementwiseOp::Sub;
  if (op == "Mul") return fb::ElementwiseOp::Mul;
  if (op == "Div") return fb::ElementwiseOp::Div;
  if (op == "Max") return fb::ElementwiseOp::Max;
  if (op == "Min") return fb::ElementwiseOp::Min;
  return fb::ElementwiseOp::Add;
}

}  // namespace jetplan::converter::ops
