#include "converter/src/ops/left_out.h"

#include <cstring>

namespace jetplan::converter::ops {
namespace {

constexpr const char* kRandom =
    "random sampling: a plan's outputs are a function of its inputs; feed random tensors as "
    "inputs instead";
constexpr const char* kSequence = "sequence values: plans hold tensors only";
constexpr const char* kOptional = "optional values: plans hold tensors only";
constexpr const char* kString = "strings are not a plan dtype";
constexpr const char* kTraining = "a training loss";
constexpr const char* kDataDependent =
    "the output's extent depends on the input's values; jetplan gives a run-time extent only to "
    "a NonMaxSuppression that is a graph output";

struct LeftOut {
  const char* op_type;
  const char* reason;
};

constexpr LeftOut kLeftOut[] = {
    {"Bernoulli", kRandom},
    {"BitCast",
     "reinterprets the bytes of one type as another of its width: a GPU plan holds a model's "
     "float32 in float16 and a float16 model computes in float32, so those bytes are not the "
     "model's; no exporter writes it"},
    {"ConcatFromSequence", kSequence},
    {"ImageDecoder",
     "decodes an encoded image inside the model; jetplan's camera path, jp_preprocessor, takes "
     "decoded frames"},
    {"LinearAttention",
     "a recurrence over the sequence (opset 27's linear and gated-delta attention), which no "
     "exporter writes yet; its function body needs a Scan over the run-time sequence"},
    {"Multinomial", kRandom},
    {"NegativeLogLikelihoodLoss", kTraining},
    {"NonZero", kDataDependent},
    {"Optional", kOptional},
    {"OptionalGetElement", kOptional},
    {"OptionalHasElement", kOptional},
    {"RandomNormal", kRandom},
    {"RandomNormalLike", kRandom},
    {"RandomUniform", kRandom},
    {"RandomUniformLike", kRandom},
    {"RegexFullMatch", kString},
    {"SequenceAt", kSequence},
    {"SequenceConstruct", kSequence},
    {"SequenceEmpty", kSequence},
    {"SequenceErase", kSequence},
    {"SequenceInsert", kSequence},
    {"SequenceLength", kSequence},
    {"SequenceMap", kSequence},
    {"SoftmaxCrossEntropyLoss", kTraining},
    {"SplitToSequence", kSequence},
    {"StringConcat", kString},
    {"StringNormalizer", kString},
    {"StringSplit", kString},
    {"TfIdfVectorizer", kString},
    {"Unique", kDataDependent},
};

}  // namespace

const char* left_out_reason(const char* op_type) {
  for (const LeftOut& l : kLeftOut)
    if (std::strcmp(l.op_type, op_type) == 0) return l.reason;
  return nullptr;
}

}  // namespace jetplan::converter::ops
