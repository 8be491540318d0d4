// jetplan-convert as a program: exit codes, one-line errors, the summary line, the written file.
#include <gmock/gmock.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/converter/util/convert_util.h"

namespace jetplan::converter::testing {
namespace {

using ::testing::ContainsRegex;
using ::testing::MatchesRegex;

struct ToolRun {
  int status = -1;
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

// Per test: ctest runs the tests of this file as parallel processes.
std::string temp_path(const std::string& name) {
  return ::testing::TempDir() + "jetplan_cli_" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
}

// Runs the converter with `args` (already shell-quoted where needed).
ToolRun run(const std::string& args) {
  const std::string out = temp_path("stdout"), err = temp_path("stderr");
  const std::string cmd = std::string(JETPLAN_CONVERT_BIN) + " " + args + " >" + out + " 2>" + err;
  const int raw = std::system(cmd.c_str());
  ToolRun r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string write_model(const std::string& name, const std::string& bytes) {
  const std::string path = temp_path(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string good_model() {
  ModelBuilder m;
  m.input("input:0", {-1, 2, 4, 4}).output("y");
  m.random("w", {3, 2, 3, 3});
  attr(m.node("Conv", {"input:0", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.node("Relu", {"c"}, {"y"}, "relu");
  return write_model("good.onnx", m.bytes());
}

int lines(const std::string& text) {
  int n = 0;
  for (char c : text) n += c == '\n';
  return n;
}

TEST(Cli, ConvertsAndPrintsTheSummary) {
  const std::string model = good_model(), plan = temp_path("good.jplan");
  std::remove(plan.c_str());
  const ToolRun r = run(model + " -o " + plan + " --shape input:0:1x2x4x4");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_THAT(r.out, StartsWith(plan + ": 1 steps, 3 tensors, weights "));
  EXPECT_THAT(r.out, HasSubstr(" bytes, arena 0 bytes (lower bound 0 bytes)\n"));
  EXPECT_EQ(lines(r.out), 1);
  const std::string bytes = slurp(plan);
  const std::vector<uint8_t> buf(bytes.begin(), bytes.end());
  EXPECT_TRUE(plan_contract_problems(buf).empty());
  const fb::Plan* p = read_plan(buf);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->metadata()->source_name()->str(),
            "jetplan_cli_ConvertsAndPrintsTheSummary_good.onnx");
  EXPECT_EQ(p->metadata()->options()->LookupByKey("shape.input:0")->value()->str(), "1x2x4x4");
}

TEST(Cli, ConversionErrorsAreOneLineWithExitCode1) {
  const std::string plan = temp_path("never.jplan");
  std::remove(plan.c_str());
  const std::string garbage = write_model("garbage.onnx", "definitely not protobuf \xff\xff\xff");
  for (const std::string& args :
       {temp_path("missing.onnx") + " -o " + plan, garbage + " -o " + plan,
        good_model() + " -o " + plan /* symbolic dim, no --shape */,
        good_model() + " -o " + plan + " --shape nope:1x2"}) {
    const ToolRun r = run(args);
    EXPECT_EQ(r.status, 1) << args;
    EXPECT_THAT(r.err, StartsWith("jetplan-convert: error: ")) << args;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_FALSE(std::ifstream(plan).good()) << "a failed conversion left a plan behind";
}

TEST(Cli, UnwritableOutput) {
  const ToolRun r =
      run(good_model() + " --shape input:0:1x2x4x4 -o " + temp_path("no_dir/x.jplan"));
  EXPECT_EQ(r.status, 1);
  EXPECT_THAT(r.err, HasSubstr("cannot write '"));
  EXPECT_THAT(r.err, HasSubstr("no_dir/x.jplan"));
}

TEST(Cli, GpuTargets) {
  const std::string model = good_model(), plan = temp_path("gpu.jplan");
  // Every step gets a CUDA kernel, or the conversion names all the steps that have none.
  const ToolRun r = run(model + " -o " + plan + " --shape input:0:1x2x4x4 --target h100");
  if (r.status == 0) {
    EXPECT_EQ(r.err, "");
    const std::string bytes = slurp(plan);
    const fb::Plan* p = fb::GetPlan(bytes.data());
    EXPECT_EQ(p->target()->name()->str(), "h100");
    EXPECT_EQ(p->target()->backend(), fb::Backend::CUDA);
    EXPECT_EQ(p->target()->sm_arch(), 90u);
  } else {
    EXPECT_EQ(r.status, 1);
    EXPECT_THAT(r.err, StartsWith("jetplan-convert: error: target h100: no CUDA kernel for "));
    EXPECT_THAT(r.err, HasSubstr("'conv+relu' (Conv): "));
    EXPECT_EQ(lines(r.err), 1);
  }
  const ToolRun unknown = run(model + " -o " + plan + " --target mars");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_THAT(unknown.err, HasSubstr("unknown target 'mars' (known: cpu, a6000, h100, h200, "
                                     "orin-agx, orin-nano, orin-nx, rtx3090, rtx4090, thor); "
                                     "no mars.json in "));
  EXPECT_THAT(unknown.err, HasSubstr(JETPLAN_SOURCE_DIR "/targets"));
  const ToolRun file = run(model + " -o " + plan + " --target " + temp_path("none.json"));
  EXPECT_EQ(file.status, 1);
  EXPECT_THAT(file.err, HasSubstr("cannot read target file '"));
  const ToolRun help = run("--help");
  EXPECT_THAT(help.out, HasSubstr("--target NAME|FILE"));
  // The search order, with this program's own folders: beside it first, the source tree after.
  const size_t beside = help.out.find("--target NAME reads NAME.json from the first of:\n  ");
  const size_t source = help.out.find("  " JETPLAN_SOURCE_DIR "/targets\n");
  ASSERT_NE(beside, std::string::npos) << help.out;
  ASSERT_NE(source, std::string::npos) << help.out;
  EXPECT_THAT(help.out.substr(beside), HasSubstr("/share/jetplan/targets\n"));
  EXPECT_LT(help.out.find("/share/jetplan/targets\n", beside), source);
}

TEST(Cli, UsageErrorsExitWith2) {
  const std::string model = good_model(), plan = temp_path("usage.jplan");
  for (const std::string& args :
       {std::string(), model, model + " -o", model + " -o " + plan + " --bogus",
        model + " -o " + plan + " --shape input:0:2xAx4", model + " -o " + plan + " --shape x",
        model + " -o " + plan + " --target mars", model + " " + model + " -o " + plan}) {
    const ToolRun r = run(args);
    EXPECT_EQ(r.status, 2) << args;
    EXPECT_THAT(r.err, StartsWith("jetplan-convert: error: ")) << args;
    EXPECT_THAT(r.err, HasSubstr("usage: jetplan-convert")) << args;
  }
  const ToolRun help = run("--help");
  EXPECT_EQ(help.status, 0);
  EXPECT_THAT(help.out, StartsWith("usage: jetplan-convert"));
}

// The progress line goes to stderr only: --progress prints one line per stage (stderr is a file
// here), nothing is printed without it or with --quiet, and the plan and stdout are the same.
TEST(Cli, ProgressGoesToStderrOnlyAndLeavesThePlanAlone) {
  const std::string model = good_model(), plan = temp_path("progress.jplan");
  const std::string base = model + " -o " + plan + " --shape input:0:1x2x4x4";
  const ToolRun plain = run(base);
  const std::string plain_bytes = slurp(plan);
  const ToolRun progress = run(base + " --progress");
  const std::string progress_bytes = slurp(plan);
  const ToolRun quiet = run(base + " --quiet");
  const std::string quiet_bytes = slurp(plan);
  for (const ToolRun* r : {&plain, &progress, &quiet}) EXPECT_EQ(r->status, 0) << r->err;
  EXPECT_EQ(plain.err, "");
  EXPECT_EQ(quiet.err, "");
  EXPECT_THAT(progress.err, MatchesRegex("jetplan-convert: import \\([0-9.]+ s\\)\n"
                                         "jetplan-convert: fold \\([0-9.]+ s\\)\n"
                                         "jetplan-convert: fuse \\([0-9.]+ s\\)\n"
                                         "jetplan-convert: lower \\([0-9.]+ s\\)\n"
                                         "jetplan-convert: memory \\([0-9.]+ s\\)\n"
                                         "jetplan-convert: serialize \\([0-9.]+ s\\)\n"
                                         "jetplan-convert: write \\([0-9.]+ s\\)\n"
                                         "jetplan-convert: converted in [0-9.]+ s\n"));
  EXPECT_FALSE(plain_bytes.empty());
  EXPECT_EQ(progress_bytes, plain_bytes);
  EXPECT_EQ(quiet_bytes, plain_bytes);
  EXPECT_EQ(progress.out, plain.out);
  EXPECT_EQ(quiet.out, plain.out);
  // A failed conversion: the stages it reached, then the error as the last line.
  const ToolRun failed = run(model + " -o " + plan + " --progress");  // symbolic dim, no --shape
  EXPECT_EQ(failed.status, 1);
  EXPECT_THAT(failed.err, StartsWith("jetplan-convert: import ("));
  EXPECT_THAT(failed.err, ContainsRegex("\\)\njetplan-convert: error: [^\n]*\n$"));
  EXPECT_EQ(failed.err.find("converted in"), std::string::npos);
  const ToolRun both = run(base + " --progress --quiet");
  EXPECT_EQ(both.status, 2);
  EXPECT_THAT(both.err, HasSubstr("--progress and --quiet given together"));
}

// --precision and the --calib* options: each mistake is a usage error (exit 2) that says which.
TEST(Cli, PrecisionAndCalibrationUsageErrors) {
  const std::string model = good_model(), plan = temp_path("int8.jplan");
  const std::string base = model + " -o " + plan + " --shape input:0:1x2x4x4";
  const std::string cache = temp_path("present.cache");
  std::ofstream(cache) << "jetplan-calibration 1 0 minmax 1\n";
  const std::string missing_cache = temp_path("missing.cache");
  std::remove(missing_cache.c_str());
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --precision int4", "--precision 'int4': expected fp16, int8 or fp32"},
      {" --target orin-agx --precision fp32 --calib /tmp", "--calib is for --precision int8"},
      {" --target orin-agx --calib /tmp", "--calib is for --precision int8"},
      {" --target orin-agx --precision int8 --calib /tmp --calib-method kl",
       "--calib-method: unknown calibration method 'kl'"},
      {" --target orin-agx --precision int8 --calib /tmp --calib-method percentile=101",
       "the percentile must be a number in (0, 100]"},
      {" --target orin-agx --precision int8 --calib /tmp --calib-preprocess crop=x",
       "--calib-preprocess: preprocessing spec 'crop=x'"},
      {" --target orin-agx --precision int8 --calib /tmp --calib-threads 0",
       "--calib-threads '0': expected a positive integer"},
      {" --target orin-agx --precision int8 --calib /tmp --calib-device tpu",
       "--calib-device: unknown calibration device 'tpu' (known: auto, cpu, gpu)"},
      {" --target orin-agx --calib-device cpu", "--calib-device is for --precision int8"},
      {" --target orin-agx --precision int8 --calib /tmp --calib-samples -3",
       "--calib-samples '-3': expected a positive integer"},
      {" --target orin-agx --precision int8 --calib /tmp --calib /tmp", "--calib given twice"},
      {" --target orin-agx --precision int8 --calib", "--calib needs a value"},
      {" --target orin-agx --int8-report r.json", "--int8-report is for --precision int8"},
      {" --target orin-agx --precision int8 --calib /tmp --int8-error-samples 0",
       "--int8-error-samples '0': expected a positive integer"},
      {" --target orin-agx --precision int8 --calib /tmp --int8-max-error 1.5",
       "--int8-max-error '1.5': expected a number between 0 and 1"},
      {" --target orin-agx --precision int8 --calib /tmp --int8-max-error x",
       "--int8-max-error 'x': expected a number between 0 and 1"},
      {" --int8-max-error 0.1", "--int8-max-error is for --precision int8"},
      {" --target orin-agx --int8-exclude conv1", "--int8-exclude is for --precision int8"},
  };
  for (const auto& [args, message] : cases) {
    const ToolRun r = run(base + args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
    EXPECT_THAT(r.err, HasSubstr("usage: jetplan-convert")) << args;
  }
  // Without data the conversion (not the parser: a Q/DQ model needs none) says what is missing.
  const std::vector<std::pair<std::string, std::string>> conversion_errors = {
      {" --target orin-agx --precision int8", "calibration needs a folder of samples (--calib DIR)"},
      {" --target orin-agx --precision int8 --calib-cache " + missing_cache,
       "the cache '" + missing_cache + "' does not exist yet"},
  };
  for (const auto& [args, message] : conversion_errors) {
    const ToolRun r = run(base + args);
    EXPECT_EQ(r.status, 1) << args << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args;
  }
  // An existing cache stands in for the data (the usage is accepted: the run gets past parsing).
  const ToolRun cached =
      run(base + " --target orin-agx --precision int8 --calib-cache " + cache +
          " --calib-method minmax --calib-threads 2 --calib-samples 8 --calib-device cpu");
  EXPECT_NE(cached.status, 2) << cached.err;
  // --precision fp32: a Float32 GPU plan, its metadata saying so.
  const ToolRun fp32 = run(base + " --target orin-agx --precision fp32");
  ASSERT_EQ(fp32.status, 0) << fp32.err;
  const std::string bytes = slurp(plan);
  const std::vector<uint8_t> buf(bytes.begin(), bytes.end());
  const fb::Plan* p = read_plan(buf);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->metadata()->options()->LookupByKey("precision")->value()->str(), "fp32");
  std::vector<std::string> kernels;
  for (const fb::Step* step : *p->steps()) kernels.push_back(step->kernel()->str());
  EXPECT_THAT(kernels, ::testing::Contains("jp_conv_igemm_f32"));
  const ToolRun help = run("--help");
  EXPECT_THAT(help.out, HasSubstr("--precision fp16|int8|fp32"));
  EXPECT_THAT(help.out, HasSubstr("--calib-preprocess S"));
  EXPECT_THAT(help.out, HasSubstr("--calib-device D"));
  EXPECT_THAT(help.out, HasSubstr("--int8-report FILE"));
}

}  // namespace
}  // namespace jetplan::converter::testing
