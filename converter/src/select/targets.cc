#include "converter/src/select/targets.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "converter/src/convert.h"
#include "converter/src/ir/error.h"

namespace jetplan::converter {
namespace {

// A flat JSON object of string and number values.
struct JsonValue {
  bool is_string = false;
  std::string text;  // the string, or the number's literal
};

class FlatJsonReader {
 public:
  FlatJsonReader(const std::string& text, const std::string& file) : s_(text), file_(file) {}

  std::map<std::string, JsonValue> read() {
    std::map<std::string, JsonValue> out;
    expect('{', "the file must hold one JSON object");
    skip_space();
    if (peek() == '}') {
      ++at_;
    } else {
      while (true) {
        skip_space();
        if (peek() != '"') error("expected a key (a string)");
        const std::string key = string();
        expect(':', cat("expected ':' after key '", key, "'"));
        skip_space();
        JsonValue v;
        if (peek() == '"') {
          v.is_string = true;
          v.text = string();
        } else {
          v.text = number(key);
        }
        if (!out.emplace(key, v).second) error(cat("key '", key, "' appears twice"));
        skip_space();
        if (peek() == ',') {
          ++at_;
          continue;
        }
        expect('}', cat("expected ',' or '}' after the value of '", key, "'"));
        break;
      }
    }
    skip_space();
    if (at_ != s_.size()) error("unexpected text after the object");
    return out;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    size_t line = 1;
    for (size_t i = 0; i < at_ && i < s_.size(); ++i) line += s_[i] == '\n';
    fail("target file '", file_, "' line ", line, ": ", what);
  }
  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }
  void skip_space() {
    while (at_ < s_.size() && (s_[at_] == ' ' || s_[at_] == '\t' || s_[at_] == '\n' ||
                               s_[at_] == '\r'))
      ++at_;
  }
  void expect(char c, const std::string& what) {
    skip_space();
    if (peek() != c) error(what);
    ++at_;
  }
  // A string without escapes other than \" and \\ (the files hold names and notes).
  std::string string() {
    ++at_;  // the opening quote
    std::string out;
    while (true) {
      if (at_ >= s_.size()) error("unterminated string");
      const char c = s_[at_++];
      if (c == '"') return out;
      if (static_cast<unsigned char>(c) < 0x20) error("control character in a string");
      if (c == '\\') {
        const char e = peek();
        if (e != '"' && e != '\\' && e != '/') error("unsupported escape in a string");
        out += e;
        ++at_;
      } else {
        out += c;
      }
    }
  }
  // A JSON number literal: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  std::string number(const std::string& key) {
    const size_t start = at_;
    auto digits = [&] {
      const size_t from = at_;
      while (at_ < s_.size() && s_[at_] >= '0' && s_[at_] <= '9') ++at_;
      return at_ - from;
    };
    if (peek() == '-') ++at_;
    const size_t int_start = at_;
    const size_t n = digits();
    bool ok = n > 0 && !(n > 1 && s_[int_start] == '0');
    if (ok && peek() == '.') {
      ++at_;
      ok = digits() > 0;
    }
    if (ok && (peek() == 'e' || peek() == 'E')) {
      ++at_;
      if (peek() == '+' || peek() == '-') ++at_;
      ok = digits() > 0;
    }
    if (!ok) {
      at_ = start;
      error(cat("the value of '", key, "' is not a string or a number"));
    }
    return s_.substr(start, at_ - start);
  }

  const std::string& s_;
  const std::string& file_;
  size_t at_ = 0;
};

std::string read_text(const std::string& path, bool* found) {
  std::ifstream f(path, std::ios::binary);
  *found = static_cast<bool>(f);
  if (!f) return "";
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

Target parse_target_json(const std::string& text, const std::string& file) {
  const std::map<std::string, JsonValue> obj = FlatJsonReader(text, file).read();
  static const std::set<std::string> kKeys = {
      "name",     "backend",  "sm_arch",   "sm_count",           "max_shared_per_block",
      "shared_per_sm", "l2_bytes", "dram_gbps", "fp16_tensor_tflops", "notes"};
  for (const auto& [key, value] : obj)
    if (kKeys.count(key) == 0) fail("target file '", file, "': unknown key '", key, "'");
  auto get = [&](const char* key, bool string) -> const std::string& {
    const auto it = obj.find(key);
    if (it == obj.end()) fail("target file '", file, "': missing key '", key, "'");
    if (it->second.is_string != string)
      fail("target file '", file, "': key '", key, "' must be a ", string ? "string" : "number");
    return it->second.text;
  };
  auto uint32 = [&](const char* key, bool positive) {
    const std::string& t = get(key, false);
    if (t.find_first_not_of("0123456789") != std::string::npos || t.size() > 10)
      fail("target file '", file, "': key '", key, "' must be a non-negative integer");
    const unsigned long long v = std::strtoull(t.c_str(), nullptr, 10);
    if (v > 0xffffffffull || (positive && v == 0))
      fail("target file '", file, "': key '", key, "' is out of range (", t, ")");
    return static_cast<uint32_t>(v);
  };
  auto positive = [&](const char* key) {
    const double v = std::strtod(get(key, false).c_str(), nullptr);
    if (!(v > 0) || !std::isfinite(v))
      fail("target file '", file, "': key '", key, "' must be a positive number");
    return v;
  };
  Target t;
  t.device.name = get("name", true);
  if (t.device.name.empty() || t.device.name == "cpu" ||
      t.device.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") !=
          std::string::npos)
    fail("target file '", file, "': key 'name' must be lowercase letters, digits, '-', '_' or "
         "'.' (and not 'cpu')");
  if (get("backend", true) != "cuda")
    fail("target file '", file, "': key 'backend' must be \"cuda\" (the only device backend)");
  t.device.sm_arch = uint32("sm_arch", true);
  t.device.sm_count = uint32("sm_count", true);
  t.device.max_shared_per_block = uint32("max_shared_per_block", true);
  t.device.shared_per_sm = uint32("shared_per_sm", true);
  t.device.l2_bytes = uint32("l2_bytes", true);
  t.device.dram_gbps = positive("dram_gbps");
  t.device.fp16_tensor_tflops = positive("fp16_tensor_tflops");
  if (obj.count("notes")) get("notes", true);
  if (t.device.max_shared_per_block > t.device.shared_per_sm)
    fail("target file '", file, "': max_shared_per_block exceeds shared_per_sm");
  t.plan = TargetDesc{t.device.name, fb::Backend::CUDA, t.device.sm_arch};
  return t;
}

std::vector<std::string> target_dirs() {
  std::vector<std::string> dirs;
  auto add = [&dirs](const std::string& dir) {
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  };
  // Beside the running program first, so that an installed or packed converter reads the
  // targets that came with it even where the source tree it was built from still exists:
  // <prefix>/bin/jetplan-convert reads <prefix>/share/jetplan/targets (cmake --install, moved
  // or not), <dir>/bin/jetplan-convert reads <dir>/targets (tests/gpu/pack.sh's folder).
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    const std::string path(exe, static_cast<size_t>(n));
    const size_t bin = path.find_last_of('/');
    const size_t top = bin == std::string::npos || bin == 0 ? std::string::npos
                                                            : path.find_last_of('/', bin - 1);
    if (top != std::string::npos) {
      const std::string prefix = path.substr(0, top);
      add(prefix + "/share/jetplan/targets");
      add(prefix + "/targets");
    }
  }
  // A converter run from its build tree reads the source tree's targets/.
#ifdef JETPLAN_SOURCE_TARGETS_DIR
  add(JETPLAN_SOURCE_TARGETS_DIR);
#endif
#ifdef JETPLAN_INSTALL_TARGETS_DIR
  add(JETPLAN_INSTALL_TARGETS_DIR);
#endif
  return dirs;
}

std::string unknown_target_message(const std::string& name) {
  std::string known, searched;
  for (const std::string& t : known_targets()) known += (known.empty() ? "" : ", ") + t;
  for (const std::string& dir : target_dirs()) searched += (searched.empty() ? "" : ", ") + dir;
  return cat("unknown target '", name, "' (known: ", known, "); no ", name, ".json in ",
             searched.empty() ? std::string("any folder") : searched);
}

bool is_target_path(const std::string& text) {
  return text.find('/') != std::string::npos || ends_with(text, ".json");
}

Target find_target(const std::string& name) {
  if (name == "cpu") return Target{TargetDesc{"cpu", fb::Backend::CPU, 0}, {}};
  bool found = false;
  if (is_target_path(name)) {
    const std::string text = read_text(name, &found);
    if (!found) fail("cannot read target file '", name, "': ", std::strerror(errno));
    return parse_target_json(text, name);
  }
  const bool plain = name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-_.") ==
                         std::string::npos && !name.empty() && name[0] != '.';
  for (const std::string& dir : plain ? target_dirs() : std::vector<std::string>{}) {
    const std::string path = dir + "/" + name + ".json";
    const std::string text = read_text(path, &found);
    if (!found) continue;
    Target t = parse_target_json(text, path);
    if (t.device.name != name)
      fail("target file '", path, "': key 'name' is '", t.device.name, "', not '", name, "'");
    return t;
  }
  fail(unknown_target_message(name));
}

std::vector<std::string> known_targets() {
  std::set<std::string> names;
  for (const std::string& dir : target_dirs()) {
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) continue;
    while (const dirent* e = readdir(d)) {
      const std::string file = e->d_name;
      if (file.size() > 5 && ends_with(file, ".json") && file[0] != '.')
        names.insert(file.substr(0, file.size() - 5));
    }
    closedir(d);
  }
  names.erase("cpu");
  std::vector<std::string> out = {"cpu"};
  out.insert(out.end(), names.begin(), names.end());
  return out;
}

}  // namespace jetplan::converter
