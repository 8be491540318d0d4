// Internal to the seq group: what support_group_seq.cc (quantized ops, the table) and
// support_group_seq_rnn.cc (the recurrent cells) share.
#pragma once

#include <string>

#include "converter/src/ir/graph.h"

namespace jetplan::converter::seq {

// "<role> '<name>' is <dtype> (jetplan needs float32)".
std::string not_float(const Value& v, const char* role);

// RNN, LSTM, GRU (see support.h, CheckFn).
std::string check_rnn(Graph& g, Node& node);

}  // namespace jetplan::converter::seq
