#include "converter/src/ir/error.h"

namespace jetplan::converter {

ConvertError::ConvertError(const std::string& message) : std::runtime_error(one_line(message)) {}

std::string one_line(const std::string& text) {
  std::string out;
  bool in_break = false;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      if (!in_break && !out.empty() && out.back() != ' ') out += ' ';
      in_break = true;
      continue;
    }
    in_break = false;
    out += u < 0x20 || u == 0x7f ? '?' : c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

}  // namespace jetplan::converter
