// Helpers on ONNX protobufs shared by the importer (onnx_import.cc): how messages name a node,
// and reading initializers stored in external data files.
#pragma once

#include <onnx/onnx_pb.h>

#include <set>
#include <string>

namespace jetplan::converter {

// "'name' (OpType)", or "'OpType_<index>' (OpType)" for an unnamed node: how every import
// message names a node.
std::string proto_label(const onnx::NodeProto& node, int index);

// The attribute's type; for one written before IR version 2 (UNDEFINED), guessed from the field
// it sets (UNDEFINED when it sets none).
onnx::AttributeProto::AttributeType attribute_type(const onnx::AttributeProto& a);

// The names `node`'s subgraphs (If branches, Loop and Scan bodies, at any depth) read from the
// graph that holds the node: its inputs that the node list does not show.
std::set<std::string> outer_references(const onnx::NodeProto& node);

// Replaces every tensor of the graph stored as external data (initializers and tensor
// attributes, in subgraphs too) by its bytes, read from the files its references name, relative
// to model_dir. Each file is opened once; paths that leave model_dir, missing files and ranges
// past a file's end are ConvertErrors naming the tensor.
void load_external_data(onnx::GraphProto* graph, const std::string& model_dir);

}  // namespace jetplan::converter
