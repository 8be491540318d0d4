// jetplan-run: loads a plan, feeds it inputs (files or seeded random data), runs it, prints an
// output summary and latency figures. It uses the public C API only, as a user's program would.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "input_files.h"
#include "jetplan/jetplan.h"
#include "npy.h"

namespace {

using jetplan::tools::dtype_name;
using jetplan::tools::shape_string;

struct Options {
  std::string plan;
  std::vector<std::string> inputs;  // NAME=FILE or FILE
  int warmup = 10;
  int iterations = 100;
  double duration_s = 0;
  std::string save_dir;
  std::string json_path;
  uint32_t seed = 0;
  bool profile = false;
  bool no_graph = false;
  bool no_early = false;
  bool samples = false;
};

void usage(FILE* out) {
  std::fprintf(out,
      "usage: jetplan-run PLAN.jplan [options]\n"
      "  --input NAME=FILE   input from FILE (.npy, .png/.jpg/.bmp image, or raw bytes);\n"
      "  --input FILE        without NAME, files fill the inputs in order; others are random\n"
      "  --warmup N          untimed runs first (default 10)\n"
      "  --iterations N      timed runs (default 100)\n"
      "  --duration SECONDS  time runs for this long instead of a fixed count\n"
      "  --seed N            seed of the random inputs (default 0)\n"
      "  --save-outputs DIR  write every output as DIR/<name>.npy\n"
      "  --json FILE         write the latency figures (and the profile) as JSON\n"
      "  --samples           with --json: also write every timed run's time, in run order, as\n"
      "                      \"samples_ms\" (host wall clock) and, for GPU plans,\n"
      "                      \"gpu_samples_ms\" (CUDA events)\n"
      "  --profile           time every step on its own (GPU: CUDA events; CPU: the clock) and\n"
      "                      print name, op, kernel, time and share of each\n"
      "  --no-graph          GPU plans: launch the steps one by one instead of replaying the\n"
      "                      CUDA graph captured at context creation (the default)\n"
      "  --no-early-launch   GPU plans: start every kernel after the previous one has finished\n"
      "                      (by default, on sm_90+, kernels that allow it launch early and wait\n"
      "                      on the GPU: programmatic dependent launch)\n");
}

// Released by die() too, so that an error exit leaks nothing.
jp_plan* g_plan = nullptr;
jp_context* g_ctx = nullptr;

void release() {
  jp_context_destroy(g_ctx);
  jp_plan_destroy(g_plan);
  g_ctx = nullptr;
  g_plan = nullptr;
}

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "jetplan-run: error: %s\n", message.c_str());
  release();
  std::exit(1);
}

void check(jp_status status) {
  if (status != JP_OK) {
    const char* detail = jp_last_error();
    die(std::string(jp_status_string(status)) + (detail[0] ? ": " : "") + detail);
  }
}

bool parse_int(const char* text, long min, long max, long* out) {
  char* end = nullptr;
  const long v = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || v < min || v > max) return false;
  *out = v;
  return true;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "jetplan-run: error: %s needs a value\n", arg.c_str());
        usage(stderr);
        std::exit(2);
      }
      return argv[++i];
    };
    auto int_value = [&](long min, long max) {
      const char* text = value();
      long v = 0;
      if (!parse_int(text, min, max, &v)) {
        std::fprintf(stderr, "jetplan-run: error: %s: '%s' is not an integer in [%ld, %ld]\n",
                     arg.c_str(), text, min, max);
        std::exit(2);
      }
      return v;
    };
    if (arg == "-h" || arg == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (arg == "--input") {
      o.inputs.push_back(value());
    } else if (arg == "--warmup") {
      o.warmup = static_cast<int>(int_value(0, 1000000));
    } else if (arg == "--iterations") {
      o.iterations = static_cast<int>(int_value(1, 100000000));
    } else if (arg == "--duration") {
      const char* text = value();
      o.duration_s = std::atof(text);
      if (!(o.duration_s > 0)) {
        std::fprintf(stderr, "jetplan-run: error: --duration: '%s' is not a positive number\n",
                     text);
        std::exit(2);
      }
    } else if (arg == "--seed") {
      o.seed = static_cast<uint32_t>(int_value(0, 0xffffffffL));
    } else if (arg == "--save-outputs") {
      o.save_dir = value();
    } else if (arg == "--json") {
      o.json_path = value();
    } else if (arg == "--profile") {
      o.profile = true;
    } else if (arg == "--no-graph") {
      o.no_graph = true;
    } else if (arg == "--no-early-launch") {
      o.no_early = true;
    } else if (arg == "--samples") {
      o.samples = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "jetplan-run: error: unknown option '%s'\n", arg.c_str());
      usage(stderr);
      std::exit(2);
    } else if (o.plan.empty()) {
      o.plan = arg;
    } else {
      std::fprintf(stderr, "jetplan-run: error: more than one plan given ('%s')\n", arg.c_str());
      std::exit(2);
    }
  }
  if (o.plan.empty()) {
    std::fprintf(stderr, "jetplan-run: error: no plan given\n");
    usage(stderr);
    std::exit(2);
  }
  if (o.samples && o.json_path.empty()) {
    std::fprintf(stderr, "jetplan-run: error: --samples needs --json FILE (samples go there)\n");
    usage(stderr);
    std::exit(2);
  }
  return o;
}

std::vector<uint8_t> random_input(const jp_tensor_desc& d, std::mt19937* rng) {
  std::vector<uint8_t> bytes(d.bytes);
  if (d.dtype == JP_FLOAT32) {
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<float> values(d.bytes / 4);
    for (float& v : values) v = dist(*rng);
    std::memcpy(bytes.data(), values.data(), d.bytes);
  } else if (d.dtype == JP_BFLOAT16) {
    // The upper halves of random float32 values in [-1, 1) (never NaN: no rounding needed).
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    std::vector<uint16_t> values(d.bytes / 2);
    for (uint16_t& v : values) {
      const float f = dist(*rng);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof bits);
      v = static_cast<uint16_t>(bits >> 16);
    }
    std::memcpy(bytes.data(), values.data(), d.bytes);
  } else {
    // Integer and boolean inputs get small non-negative values, valid as indices and flags.
    // Little-endian: the value goes in each element's low byte, the rest stay zero.
    std::uniform_int_distribution<int> dist(0, d.dtype == JP_BOOL ? 1 : 9);
    size_t elements = 1;
    for (int32_t i = 0; i < d.rank; ++i) elements *= static_cast<size_t>(d.dims[i]);
    if (elements == 0) return bytes;  // an empty input: nothing to fill
    const size_t elem = d.bytes / elements;
    for (size_t i = 0; i < bytes.size(); i += elem) bytes[i] = static_cast<uint8_t>(dist(*rng));
  }
  return bytes;
}

std::string safe_file_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  }
  return out.empty() ? "output" : out;
}

void print_output(const jp_tensor_desc& d, const void* data) {
  std::printf("output '%s': %s %s", d.name, shape_string(d.dims, d.rank).c_str(),
              dtype_name(d.dtype));
  if (d.dtype != JP_FLOAT32) {
    std::printf("\n");
    return;
  }
  const float* v = static_cast<const float*>(data);
  const size_t n = d.bytes / 4;
  if (n == 0) {
    std::printf("\n");
    return;
  }
  double sum = 0;
  float lo = v[0], hi = v[0];
  size_t argmax = 0;
  size_t nonfinite = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(v[i])) ++nonfinite;
    sum += v[i];
    lo = std::min(lo, v[i]);
    if (v[i] > hi) {
      hi = v[i];
      argmax = i;
    }
  }
  std::printf("  min %.6g  max %.6g (at %zu)  mean %.6g", lo, hi, argmax, sum / n);
  if (nonfinite) std::printf("  NON-FINITE: %zu", nonfinite);
  std::printf("\n    first:");
  for (size_t i = 0; i < std::min<size_t>(n, 6); ++i) std::printf(" %.6g", v[i]);
  std::printf("\n");
}

double percentile(const std::vector<double>& sorted, double p) {
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - static_cast<double>(lo));
}

struct Stats {
  double median, p90, p99, max, mean;
};

Stats stats(const std::vector<double>& values) {
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  double total = 0;
  for (double v : values) total += v;
  return Stats{percentile(sorted, 50), percentile(sorted, 90), percentile(sorted, 99),
               sorted.back(), total / static_cast<double>(values.size())};
}

std::string json_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out;
}

// Inputs: named files, then positional files in order, then seeded random data.
void set_inputs(const Options& opt, const jp_plan* plan, jp_context* ctx) {
  const int32_t num_inputs = jp_plan_num_inputs(plan);
  std::vector<std::string> files(static_cast<size_t>(num_inputs));
  int32_t next_positional = 0;
  for (const std::string& spec : opt.inputs) {
    const size_t eq = spec.find('=');
    int32_t index = -1;
    std::string path = spec;
    if (eq != std::string::npos) {
      const std::string name = spec.substr(0, eq);
      path = spec.substr(eq + 1);
      if (jp_plan_find_input(plan, name.c_str(), &index) != JP_OK) {
        die("--input " + spec + ": the plan has no input named '" + name + "'");
      }
    } else {
      while (next_positional < num_inputs && !files[next_positional].empty()) ++next_positional;
      if (next_positional >= num_inputs) {
        die("--input " + spec + ": more input files than the plan's " +
            std::to_string(num_inputs) + " inputs");
      }
      index = next_positional++;
    }
    files[static_cast<size_t>(index)] = path;
  }
  std::mt19937 rng(opt.seed);
  for (int32_t i = 0; i < num_inputs; ++i) {
    jp_tensor_desc desc;
    check(jp_plan_input_desc(plan, i, &desc));
    std::vector<uint8_t> bytes;
    std::string source = "random (seed " + std::to_string(opt.seed) + ")";
    if (!files[i].empty()) {
      std::string error;
      if (!jetplan::tools::load_input_file(files[i], desc, &bytes, &error)) die(error);
      source = files[i];
    } else {
      bytes = random_input(desc, &rng);
    }
    std::printf("input '%s': %s %s from %s\n", desc.name, shape_string(desc.dims, desc.rank).c_str(),
                dtype_name(desc.dtype), source.c_str());
    check(jp_context_set_input(ctx, i, bytes.data(), bytes.size()));
  }

}

// Warm-up, then the timed runs: host wall clock per run into *ms, CUDA events into *gpu_ms.
void time_runs(const Options& opt, bool gpu, jp_context* ctx, std::vector<double>* ms,
               std::vector<double>* gpu_ms) {
  for (int i = 0; i < opt.warmup; ++i) check(jp_context_run(ctx));
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  for (int i = 0;; ++i) {
    if (opt.duration_s > 0) {
      if (std::chrono::duration<double>(clock::now() - start).count() >= opt.duration_s && i > 0)
        break;
    } else if (i >= opt.iterations) {
      break;
    }
    const auto t0 = clock::now();
    check(jp_context_run(ctx));
    ms->push_back(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
    float g = 0.f;
    if (gpu && jp_context_gpu_time_ms(ctx, &g) == JP_OK) gpu_ms->push_back(g);
  }
  if (ms->empty()) check(jp_context_run(ctx));  // --iterations 0 is refused; keep outputs valid

}

// Prints every output (and saves it with --save-outputs).
void write_outputs(const Options& opt, int32_t num_outputs, jp_context* ctx) {
  for (int32_t i = 0; i < num_outputs; ++i) {
    jp_tensor_desc desc;
    check(jp_context_output_desc(ctx, i, &desc));  // this run's extent where it varies
    const void* data = nullptr;
    size_t bytes = 0;
    check(jp_context_get_output(ctx, i, &data, &bytes));
    print_output(desc, data);
    if (!opt.save_dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(opt.save_dir, ec);
      const std::string path = opt.save_dir + "/" + safe_file_name(desc.name) + ".npy";
      std::string error;
      std::vector<int64_t> shape(desc.dims, desc.dims + desc.rank);
      if (!jetplan::tools::write_npy(path, jetplan::tools::npy_descr(desc.dtype), shape, data,
                                     bytes, &error)) {
        die(error);
      }
    }
  }

}

// Per-step profile: each step timed on its own (after the timed runs, so they are unaffected).
// The median time of each step, all 0 without --profile.
std::vector<double> profile_steps(const Options& opt, const jp_plan* plan, jp_context* ctx) {
  const int32_t steps = jp_plan_num_steps(plan);
  std::vector<double> step_ms(static_cast<size_t>(steps), 0.0);
  if (opt.profile && steps > 0) {
    constexpr int kProfileRuns = 20;
    std::vector<float> one(static_cast<size_t>(steps));
    std::vector<std::vector<float>> runs(static_cast<size_t>(steps));
    for (int r = 0; r < kProfileRuns; ++r) {
      check(jp_context_profile_steps(ctx, one.data(), steps));
      for (int32_t i = 0; i < steps; ++i) runs[i].push_back(one[i]);
    }
    double sum = 0;
    for (int32_t i = 0; i < steps; ++i) {
      std::sort(runs[i].begin(), runs[i].end());
      step_ms[i] = runs[i][runs[i].size() / 2];
      sum += step_ms[i];
    }
    std::printf("profile (median of %d runs of each step on its own, ms):\n", kProfileRuns);
    std::printf("  %4s  %-40s %-14s %-36s %9s %6s\n", "step", "name", "op", "kernel", "ms",
                "share");
    for (int32_t i = 0; i < steps; ++i) {
      jp_step_desc d;
      check(jp_plan_step_desc(plan, i, &d));
      std::printf("  %4d  %-40.40s %-14s %-36.36s %9.4f %5.1f%%\n", i, d.name, d.op,
                  d.kernel[0] ? d.kernel : "(cpu)", step_ms[i],
                  sum > 0 ? 100.0 * step_ms[i] / sum : 0.0);
    }
    std::printf("  sum of steps %.4f ms\n", sum);
  }
  return step_ms;
}

void write_json(const Options& opt, const jp_plan* plan, bool gpu, const std::vector<double>& ms,
                const std::vector<double>& gpu_ms, const Stats& wall, const Stats& device,
                const std::vector<double>& step_ms) {
  const auto steps = static_cast<int32_t>(step_ms.size());
  std::ofstream json(opt.json_path);
  json << "{\"plan\": \"" << json_escape(opt.plan) << "\", \"backend\": \""
       << (gpu ? "cuda" : "cpu") << "\", \"device\": \"" << json_escape(jp_plan_device_name(plan))
       << "\", \"cuda_graph\": " << (gpu && !opt.no_graph ? "true" : "false")
       << ", \"early_launch\": " << (gpu && !opt.no_early ? "true" : "false")
       << ", \"warmup\": " << opt.warmup << ", \"iterations\": " << ms.size()
       << ", \"median_ms\": " << wall.median << ", \"p90_ms\": " << wall.p90
       << ", \"p99_ms\": " << wall.p99 << ", \"max_ms\": " << wall.max
       << ", \"mean_ms\": " << wall.mean << ", \"throughput_per_s\": " << 1000.0 / wall.mean;
  if (!gpu_ms.empty()) {
    json << ", \"gpu_median_ms\": " << device.median << ", \"gpu_p90_ms\": " << device.p90
         << ", \"gpu_p99_ms\": " << device.p99 << ", \"gpu_max_ms\": " << device.max;
  }
  if (opt.samples) {
    // Every timed run, in run order: what the statistics above summarize.
    auto list = [&json](const char* key, const std::vector<double>& values) {
      json << ", \"" << key << "\": [";
      for (size_t i = 0; i < values.size(); ++i) json << (i ? ", " : "") << values[i];
      json << "]";
    };
    list("samples_ms", ms);
    if (!gpu_ms.empty()) list("gpu_samples_ms", gpu_ms);
  }
  if (opt.profile) {
    json << ", \"profile\": [";
    for (int32_t i = 0; i < steps; ++i) {
      jp_step_desc d;
      check(jp_plan_step_desc(plan, i, &d));
      json << (i ? ", " : "") << "{\"name\": \"" << json_escape(d.name) << "\", \"op\": \""
           << d.op << "\", \"kernel\": \"" << json_escape(d.kernel) << "\", \"ms\": "
           << step_ms[i] << "}";
    }
    json << "]";
  }
  json << "}\n";
  if (!json) die("cannot write '" + opt.json_path + "'");
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);

  check(jp_plan_load_file(opt.plan.c_str(), &g_plan));
  const jp_plan* plan = g_plan;
  const int32_t num_inputs = jp_plan_num_inputs(plan);
  const int32_t num_outputs = jp_plan_num_outputs(plan);
  const bool gpu = jp_plan_backend(plan) == JP_BACKEND_CUDA;
  std::printf("plan %s: %d inputs, %d outputs, %d steps, arena %zu bytes, backend %s (%s)\n",
              opt.plan.c_str(), num_inputs, num_outputs, jp_plan_num_steps(plan),
              jp_plan_arena_bytes(plan), gpu ? "cuda" : "cpu", jp_plan_device_name(plan));

  jp_context_options options{};
  options.flags = (opt.no_graph ? JP_CONTEXT_NO_CUDA_GRAPH : 0u) |
                  (opt.no_early ? JP_CONTEXT_NO_EARLY_LAUNCH : 0u);
  check(jp_context_create(plan, &options, &g_ctx));
  jp_context* ctx = g_ctx;
  set_inputs(opt, plan, ctx);
  std::vector<double> ms, gpu_ms;
  time_runs(opt, gpu, ctx, &ms, &gpu_ms);
  write_outputs(opt, num_outputs, ctx);

  const Stats wall = stats(ms);
  std::printf("latency over %zu runs after %d warm-up (host wall clock, ms): median %.4f  p90 %.4f"
              "  p99 %.4f  max %.4f  mean %.4f  throughput %.1f runs/s\n",
              ms.size(), opt.warmup, wall.median, wall.p90, wall.p99, wall.max, wall.mean,
              1000.0 / wall.mean);
  Stats device{};
  if (!gpu_ms.empty()) {
    device = stats(gpu_ms);
    std::printf("GPU time of the steps (CUDA events, %s, ms): median %.4f  p90 %.4f  p99 %.4f  "
                "max %.4f  mean %.4f\n", opt.no_graph ? "launched one by one" : "one CUDA graph",
                device.median, device.p90, device.p99, device.max, device.mean);
  }

  const std::vector<double> step_ms = profile_steps(opt, plan, ctx);
  if (!opt.json_path.empty()) write_json(opt, plan, gpu, ms, gpu_ms, wall, device, step_ms);

  release();
  return 0;
}
