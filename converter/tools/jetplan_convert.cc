// jetplan-convert: ONNX model -> jetplan plan (.jplan).
//
// Exit status: 0 converted, 1 the conversion failed (one line on stderr naming the problem),
// 2 the command line is wrong (a line naming the mistake, then the usage text), including an
// option's value the model refuses (--freeze of no graph input, or of a value it cannot take).
#include <google/protobuf/stubs/logging.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>
#include <vector>

#include "converter/src/calibrate/calib_data.h"
#include "converter/src/convert.h"
#include "converter/src/ir/error.h"
#include "converter/src/select/targets.h"
#include "converter/tools/progress_line.h"

namespace {

using jetplan::converter::ConvertError;
using jetplan::converter::ConvertOptions;

constexpr const char* kUsage =
    "usage: jetplan-convert MODEL.onnx -o PLAN.jplan [options]\n"
    "       jetplan-convert --list-ops\n"
    "\n"
    "Converts an ONNX model (float32) into a jetplan plan.\n"
    "\n"
    "options:\n"
    "  -o, --output PATH     where to write the plan (required)\n"
    "  --shape NAME:DIMS     pin the shape of graph input NAME, e.g. --shape input:1x3x224x224;\n"
    "                        needed for inputs with symbolic dims (repeat for several inputs;\n"
    "                        NAME may contain ':', the last one separates the dims)\n"
    "  --freeze NAME=VALUE   pin graph input NAME to a constant before anything folds, so that\n"
    "                        If, Loop and Scan on it fold away; the plan has no input NAME.\n"
    "                        VALUE is a literal of the input's element type (16000, 0.5,\n"
    "                        true; [1,2,3] for a 1-D input) or the path of a .npy file of\n"
    "                        that type and shape (repeat for several inputs; NAME ends at\n"
    "                        the first '=')\n"
    "  --no-fuse             keep BatchNorm, bias, residual, activation and elementwise nodes\n"
    "                        as their own steps\n"
    "  --target NAME|FILE    the device the plan is for: cpu (the default, reference\n"
    "                        kernels), or a GPU: orin-agx, orin-nx, orin-nano, thor, h100,\n"
    "                        h200, rtx4090, a6000, rtx3090 (NAME.json in the first of the\n"
    "                        folders listed below that has it), or the path of such a .json\n"
    "                        file. GPU plans hold float16 tensors inside\n"
    "                        (float32 inputs and outputs), NHWC around convolutions, and\n"
    "                        each step's CUDA kernel and launch configuration\n"
    "  --portable-kernels    GPU plans: only kernels that every GPU arch has, none of the\n"
    "                        target's own (sm_90's wgmma tiles): the Ampere-class kernels\n"
    "                        Orin runs, for timing them on an H100 or H200\n"
    "  --precision fp16|int8|fp32 the precision of a GPU plan's steps (default fp16). int8\n"
    "                        quantizes with scales from post-training calibration: it needs\n"
    "                        --calib DIR, or a --calib-cache that exists. With --target cpu,\n"
    "                        int8 writes the INT8 reference plan: the INT8 convs with the GPU\n"
    "                        kernels' integer arithmetic, everything else in float32. A model\n"
    "                        with QuantizeLinear/DequantizeLinear pairs (QAT, onnxruntime's\n"
    "                        QDQ format) runs in INT8 with its own scales on GPU targets\n"
    "                        without --precision or --calib. fp32 keeps every step in\n"
    "                        float32 as the CPU plan computes it (slower: a reference\n"
    "                        on the device; FP32 convs and GEMMs, no fused attention)\n"
    "  --calib DIR           int8: the calibration set: .npy files (one sample each), images\n"
    "                        (.png .jpg .jpeg .bmp) or one folder per sample holding\n"
    "                        <input>.npy for each input; read in order of file name\n"
    "  --calib-method M      mse (the default), entropy, percentile[=P] (P in (0,100],\n"
    "                        default 99.99) or minmax\n"
    "  --calib-preprocess S  how images become the input, e.g. resize=256,crop=224,\n"
    "                        mean=0.485:0.456:0.406,std=0.229:0.224:0.225,order=rgb,\n"
    "                        layout=nchw,scale=255 (every key optional; resize=N is the short\n"
    "                        side, resize=HxW exact; crop=N or HxW, centred)\n"
    "  --calib-cache PATH    read the scales from PATH when it exists (it must be of this\n"
    "                        model and method; the model does not run), else write them there\n"
    "  --calib-device D      where calibration runs the FP32 model: auto (the default: GPU 0\n"
    "                        as a Float32 plan where it has a target, else the CPU), cpu or\n"
    "                        gpu (an error where it cannot). The scales agree within float32\n"
    "                        rounding; for plans identical across machines use cpu or a cache\n"
    "  --calib-threads N     CPU: contexts run at once; GPU: threads building histograms\n"
    "                        (default: one per core)\n"
    "  --calib-samples N     use only the first N samples (default: all)\n"
    "  --int8-exclude NODE   int8: keep the steps of ONNX node NODE in FP16 (repeatable)\n"
    "  --int8-report FILE    int8: measure each INT8 step's error against FP32 on calibration\n"
    "                        samples (SNR, share of the output error), print the table and\n"
    "                        write it to FILE as JSON\n"
    "  --int8-max-error E    int8: move the INT8 steps with the largest shares of the output\n"
    "                        error back to float until every output's relative RMS error\n"
    "                        against FP32 is at most E (e.g. 0.02; SNR >= -20 log10 E dB)\n"
    "  --int8-error-samples N  how many calibration samples the report and the bound\n"
    "                        measure on (default 8)\n"
    "  --progress            show the progress line (stage, samples, elapsed time) on stderr\n"
    "                        from the start, as one line per stage when stderr is not a\n"
    "                        terminal. Without it the line shows only on a terminal, once a\n"
    "                        conversion has run for a second\n"
    "  --quiet               no progress line (errors and the summary still print)\n"
    "  --list-ops            print the table of ONNX ops jetplan supports (markdown, the\n"
    "                        contents of converter/SUPPORTED_OPS.md) and exit\n"
    "  -h, --help            print this help\n"
    "  --version             print the converter version\n";

// The usage text and where this program looks for --target NAME (target_dirs: beside the
// program first, so that the list says where an installed or packed converter reads them).
std::string usage() {
  std::string text = std::string(kUsage) + "\n--target NAME reads NAME.json from the first of:\n";
  for (const std::string& dir : jetplan::converter::target_dirs()) text += "  " + dir + "\n";
  return text +
         "(<prefix>/share/jetplan/targets of an installed converter, <dir>/targets of a packed\n"
         "one, the source tree's targets/ of one in its build tree)\n";
}

struct UsageError {
  std::string message;
};

struct Args {
  std::string model;
  std::string output;
  ConvertOptions options;
  std::vector<std::string> calibration_options;  // the --calib* options given, for messages
  std::string int8_report;                        // --int8-report FILE
  bool progress = false, quiet = false;           // --progress, --quiet
};

int positive_count(const std::string& option, const std::string& text) {
  if (text.empty() || text.size() > 9 ||
      text.find_first_not_of("0123456789") != std::string::npos || std::stoi(text) < 1) {
    throw UsageError{option + " '" + text + "': expected a positive integer"};
  }
  return std::stoi(text);
}

// The --calib* options; false when `arg` is none of them.
template <typename Is, typename Value>
bool parse_calibration_option(Is is, Value value,
                              jetplan::converter::CalibrationOptions* calibration,
                              std::vector<std::string>* given) {
  static const char* const kOptions[] = {"--calib",         "--calib-method",  "--calib-preprocess",
                                         "--calib-cache",   "--calib-threads", "--calib-samples",
                                         "--calib-device"};
  const char* option = nullptr;
  for (const char* o : kOptions) {
    if (is(o)) option = o;
  }
  if (option == nullptr) return false;
  if (std::find(given->begin(), given->end(), option) != given->end()) {
    throw UsageError{std::string(option) + " given twice"};
  }
  given->push_back(option);
  const std::string v = value(option);
  const std::string name = option;
  if (name == "--calib") {
    if (v.empty()) throw UsageError{"--calib needs a folder"};
    calibration->dir = v;
  } else if (name == "--calib-method") {
    try {
      jetplan::converter::parse_method(v, &calibration->method, &calibration->percentile);
    } catch (const ConvertError& e) {
      throw UsageError{std::string("--calib-method: ") + e.what()};
    }
  } else if (name == "--calib-preprocess") {
    try {
      jetplan::converter::parse_preprocess(v);  // checked here; the calibration parses it again
    } catch (const ConvertError& e) {
      throw UsageError{std::string("--calib-preprocess: ") + e.what()};
    }
    calibration->preprocess = v;
  } else if (name == "--calib-cache") {
    if (v.empty()) throw UsageError{"--calib-cache needs a path"};
    calibration->cache_path = v;
  } else if (name == "--calib-threads") {
    calibration->threads = positive_count(name, v);
  } else if (name == "--calib-device") {
    try {
      calibration->device = jetplan::converter::parse_calibration_device(v);
    } catch (const ConvertError& e) {
      throw UsageError{std::string("--calib-device: ") + e.what()};
    }
  } else {
    calibration->max_samples = positive_count(name, v);
  }
  return true;
}

// --calib* and the other INT8 options need --precision int8 (whether the model needs calibration
// data, or carries its own Q/DQ scales, the conversion says).
void check_precision(const Args& args) {
  if (args.options.precision != jetplan::converter::Precision::kInt8 &&
      !args.calibration_options.empty())
    throw UsageError{args.calibration_options.front() + " is for --precision int8"};
}

bool parse_dims(const std::string& text, std::vector<int64_t>* dims) {
  dims->clear();
  size_t at = 0;
  while (true) {
    const size_t end = text.find('x', at);
    const std::string part =
        text.substr(at, end == std::string::npos ? std::string::npos : end - at);
    if (part.empty() || part.size() > 12 ||
        part.find_first_not_of("0123456789") != std::string::npos)
      return false;
    const int64_t d = std::stoll(part);
    if (d < 1) return false;
    dims->push_back(d);
    if (end == std::string::npos) return true;
    at = end + 1;
  }
}

void add_shape(const std::string& spec, ConvertOptions* options) {
  const size_t colon = spec.rfind(':');
  std::vector<int64_t> dims;
  if (colon == std::string::npos || colon == 0 || !parse_dims(spec.substr(colon + 1), &dims))
    throw UsageError{"--shape '" + spec +
                     "': expected NAME:DIMS with DIMS positive integers joined by 'x' (e.g. "
                     "input:1x3x224x224)"};
  const std::string name = spec.substr(0, colon);
  if (!options->input_shapes.emplace(name, dims).second)
    throw UsageError{"--shape given twice for input '" + name + "'"};
}

void add_freeze(const std::string& spec, ConvertOptions* options) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw UsageError{"--freeze '" + spec +
                     "': expected NAME=VALUE, VALUE a literal (16000, 0.5, true, [1,2,3]) or a "
                     ".npy file"};
  const std::string name = spec.substr(0, eq);
  if (!options->freeze.emplace(name, spec.substr(eq + 1)).second)
    throw UsageError{"--freeze given twice for input '" + name + "'"};
}

// Returns false for --help / --version (already answered).
bool parse_args(int argc, char** argv, Args* args) {
  bool have_target = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const std::string& option) -> std::string {
      const std::string prefix = option + "=";
      if (arg.compare(0, prefix.size(), prefix) == 0) return arg.substr(prefix.size());
      if (i + 1 >= argc) throw UsageError{option + " needs a value"};
      return argv[++i];
    };
    auto is = [&](const char* option) {
      return arg == option ||
             arg.compare(0, std::strlen(option) + 1, std::string(option) + "=") == 0;
    };
    if (arg == "-h" || arg == "--help") {
      std::fputs(usage().c_str(), stdout);
      return false;
    } else if (arg == "--version") {
      std::printf("jetplan-convert %s\n", jetplan::converter::kConverterVersion);
      return false;
    } else if (arg == "--list-ops") {
      if (argc != 2) throw UsageError{"--list-ops takes no model and no other option"};
      std::fputs(jetplan::converter::supported_ops_markdown().c_str(), stdout);
      return false;
    } else if (arg == "-o" || is("--output")) {
      if (!args->output.empty()) throw UsageError{"-o given twice"};
      args->output = value(arg == "-o" ? "-o" : "--output");
      if (args->output.empty()) throw UsageError{"-o needs a non-empty path"};
    } else if (is("--shape")) {
      add_shape(value("--shape"), &args->options);
    } else if (is("--freeze")) {
      add_freeze(value("--freeze"), &args->options);
    } else if (arg == "--progress" || arg == "--quiet") {
      (arg == "--progress" ? args->progress : args->quiet) = true;
      if (args->progress && args->quiet) throw UsageError{"--progress and --quiet given together"};
    } else if (arg == "--no-fuse") {
      args->options.fuse = false;
    } else if (arg == "--portable-kernels") {
      args->options.portable_kernels = true;
    } else if (is("--target")) {
      if (have_target) throw UsageError{"--target given twice"};
      have_target = true;
      args->options.target = value("--target");
      // A target file is read (and its errors reported) by the conversion.
      const std::vector<std::string> names = jetplan::converter::known_targets();
      if (!jetplan::converter::is_target_path(args->options.target) &&
          std::find(names.begin(), names.end(), args->options.target) == names.end())
        throw UsageError{jetplan::converter::unknown_target_message(args->options.target)};
    } else if (is("--precision")) {
      const std::string p = value("--precision");
      if (p != "fp16" && p != "int8" && p != "fp32") {
        throw UsageError{"--precision '" + p + "': expected fp16, int8 or fp32"};
      }
      args->options.precision = p == "int8"   ? jetplan::converter::Precision::kInt8
                                : p == "fp32" ? jetplan::converter::Precision::kFp32
                                              : jetplan::converter::Precision::kFp16;
    } else if (is("--int8-report")) {
      args->int8_report = value("--int8-report");
      if (args->int8_report.empty()) throw UsageError{"--int8-report needs a file"};
      args->options.int8_report = true;
      args->calibration_options.push_back("--int8-report");
    } else if (is("--int8-error-samples")) {
      args->options.int8_error_samples =
          positive_count("--int8-error-samples", value("--int8-error-samples"));
      args->calibration_options.push_back("--int8-error-samples");
    } else if (is("--int8-max-error")) {
      const std::string text = value("--int8-max-error");
      char* end = nullptr;
      const double e = std::strtod(text.c_str(), &end);
      if (text.empty() || *end != '\0' || !(e > 0.0 && e < 1.0))
        throw UsageError{"--int8-max-error '" + text + "': expected a number between 0 and 1 "
                         "(a relative RMS error, e.g. 0.02)"};
      args->options.int8_max_error = e;
      args->calibration_options.push_back("--int8-max-error");
    } else if (is("--int8-exclude")) {
      const std::string node = value("--int8-exclude");
      if (node.empty()) throw UsageError{"--int8-exclude needs a node name"};
      args->options.int8_exclude.push_back(node);
      args->calibration_options.push_back("--int8-exclude");
    } else if (parse_calibration_option(is, value, &args->options.calibration,
                                        &args->calibration_options)) {
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw UsageError{"unknown option '" + arg + "'"};
    } else {
      if (!args->model.empty())
        throw UsageError{"more than one model given ('" + args->model + "', '" + arg + "')"};
      args->model = arg;
    }
  }
  if (args->model.empty()) throw UsageError{"no model given"};
  if (args->output.empty()) throw UsageError{"no output given (-o PLAN.jplan)"};
  check_precision(*args);
  return true;
}

std::string base_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Where the model's external data files are: its directory.
std::string dir_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string read_file(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw ConvertError("cannot read '" + path + "': " + std::strerror(errno));
  std::string bytes;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) bytes.append(buffer, n);
  const int read_errno = errno;
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw ConvertError("cannot read '" + path + "': " + std::strerror(read_errno));
  return bytes;
}

// Writes through a temporary file, so a failed write leaves no partial plan behind.
void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw ConvertError("cannot write '" + path + "': " + std::strerror(errno));
  const bool wrote = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const int write_errno = errno;
  const bool closed = std::fclose(f) == 0;
  if (!wrote || !closed) {
    std::remove(tmp.c_str());
    throw ConvertError("cannot write '" + path +
                       "': " + std::strerror(wrote ? errno : write_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(tmp.c_str());
    throw ConvertError("cannot write '" + path + "': " + std::strerror(rename_errno));
  }
}

using jetplan::converter::ProgressLine;

// --quiet: none; --progress: from the start, lines where stderr is not a terminal; neither: on a
// terminal only, after a second (a quick conversion shows nothing).
ProgressLine::Mode progress_mode(const Args& args, double* delay) {
  const bool terminal = isatty(STDERR_FILENO) != 0;
  *delay = args.progress ? 0.0 : 1.0;
  if (args.quiet || (!args.progress && !terminal)) return ProgressLine::Mode::kOff;
  return terminal ? ProgressLine::Mode::kTerminal : ProgressLine::Mode::kLines;
}
}  // namespace

int main(int argc, char** argv) {
  // libprotobuf would print its own diagnostics; every failure is reported below in one line.
  google::protobuf::SetLogHandler(nullptr);
  Args args;
  try {
    if (!parse_args(argc, argv, &args)) return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "jetplan-convert: error: %s\n\n%s",
                 jetplan::converter::one_line(e.message).c_str(), usage().c_str());
    return 2;
  }
  double delay = 0.0;
  const ProgressLine::Mode mode = progress_mode(args, &delay);
  ProgressLine progress(mode, stderr, delay);
  args.options.progress = progress.function();
  // Every message below ends the progress line first, so it never runs into one.
  auto error = [&progress](const std::string& message) {
    progress.finish(false);
    std::fprintf(stderr, "jetplan-convert: error: %s\n",
                 jetplan::converter::one_line(message).c_str());
    return 1;
  };
  try {
    const std::string model = read_file(args.model);
    args.options.model_dir = dir_name(args.model);
    jetplan::converter::ConvertResult result;
    try {
      result = jetplan::converter::convert_onnx(model, base_name(args.model), args.options);
    } catch (const jetplan::converter::OptionError& e) {
      // An option's value that this model refuses (--freeze): a wrong command line.
      progress.finish(false);
      std::fprintf(stderr, "jetplan-convert: error: %s\n\n%s",
                   jetplan::converter::one_line(e.what()).c_str(), usage().c_str());
      return 2;
    } catch (const ConvertError& e) {
      return error(args.model + ": " + e.what());
    }
    progress.update("write", 0, 0);
    write_file(args.output, result.plan);
    if (!args.int8_report.empty()) {
      const std::string& json = result.int8_report_json;
      write_file(args.int8_report, std::vector<uint8_t>(json.begin(), json.end()));
    }
    progress.finish(true);
    std::printf("%s\n", jetplan::converter::format_summary(args.output, result.summary).c_str());
    if (!args.int8_report.empty()) std::printf("%s", result.int8_report_table.c_str());
    return 0;
  } catch (const ConvertError& e) {
    return error(e.what());
  } catch (const std::bad_alloc&) {
    return error(args.model + ": out of memory");
  } catch (const std::exception& e) {
    return error(args.model + ": internal error: " + e.what());
  } catch (...) {
    return error(args.model + ": internal error: unknown exception");
  }
}
