// Errors of the converter. The converter is a workstation tool, so it reports failures by
// exception; the CLI catches everything and prints one line.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace jetplan::converter {

// A conversion failure. what() is one line that names the problem (and the node, when there is
// one) without the source file name: the caller prefixes that.
class ConvertError : public std::runtime_error {
 public:
  // The message goes through one_line(): names from the model may hold any bytes.
  explicit ConvertError(const std::string& message);
};

// A conversion failure caused by the value of one of the caller's options rather than by the
// model (--freeze naming no graph input, or a value the input cannot take): jetplan-convert
// answers it as a wrong command line (exit status 2).
class OptionError : public ConvertError {
 public:
  using ConvertError::ConvertError;
};

template <typename... Args>
std::string cat(Args&&... args) {
  std::ostringstream out;
  (out << ... << std::forward<Args>(args));
  return out.str();
}

template <typename... Args>
[[noreturn]] void fail(Args&&... args) {
  throw ConvertError(cat(std::forward<Args>(args)...));
}

// `text` on one printable line: line breaks and tabs (libonnx messages span several lines)
// become one space, other control characters '?'.
std::string one_line(const std::string& text);

}  // namespace jetplan::converter
