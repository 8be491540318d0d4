#include "converter/src/precision/int8_report.h"

#include <jetplan/jetplan.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <thread>

#include "converter/src/calibrate/plan_handles.h"
#include "converter/src/ir/error.h"

namespace jetplan::converter {
namespace {

// The values of the watched tensors one run wrote, as float (Int8 ones times their scale).
struct Capture {
  const std::map<std::string, float>* watched = nullptr;  // name -> Int8 scale (0: a float)
  std::map<std::string, std::vector<float>> values;
};

void observe(void* user, int32_t, const char* name, jp_dtype dtype, const int64_t* dims,
             int32_t rank, const void* data) {
  auto* c = static_cast<Capture*>(user);
  const auto it = c->watched->find(name);
  if (it == c->watched->end()) return;
  size_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= static_cast<size_t>(dims[d]);
  std::vector<float>& v = c->values[name] = tensor_floats(dtype, data, n);
  if (dtype == JP_INT8)
    for (float& e : v) e *= it->second;
}

// Sample i through both plans: per watched tensor, sum ref^2 and sum (int8 - ref)^2.
using Sums = std::map<std::string, std::pair<double, double>>;

Sums run_sample(const jp_plan* fp32, const jp_plan* int8, const CalibrationSet& set,
                const std::map<std::string, float>& watched, size_t i) {
  auto check = [](jp_status status, const std::string& what) {
    check_runtime(status, "INT8 report: " + what);
  };
  jp_context* a = nullptr;
  jp_context* b = nullptr;
  check(jp_context_create(fp32, nullptr, &a), "a context of the FP32 plan");
  const ContextPtr ca(a);
  check(jp_context_create(int8, nullptr, &b), "a context of the INT8 plan");
  const ContextPtr cb(b);
  Capture ref, got;
  ref.watched = got.watched = &watched;
  check(jp_context_set_step_observer(a, observe, &ref), "observing the FP32 plan");
  check(jp_context_set_step_observer(b, observe, &got), "observing the INT8 plan");
  // Both plans bind their inputs in the draft's order, the set's order.
  const std::vector<std::vector<uint8_t>> inputs = set.load(i);
  set_inputs(a, inputs, "INT8 report: sample " + set.sample_path(i));
  set_inputs(b, inputs, "INT8 report: sample " + set.sample_path(i));
  check(jp_context_run(a), "running the FP32 plan on " + set.sample_path(i));
  check(jp_context_run(b), "running the INT8 plan on " + set.sample_path(i));
  Sums sums;
  for (const auto& [name, want] : ref.values) {
    const auto it = got.values.find(name);
    if (it == got.values.end() || it->second.size() != want.size()) continue;
    auto& [signal, noise] = sums[name];
    for (size_t e = 0; e < want.size(); ++e) {
      const double d = double(it->second[e]) - want[e];
      signal += double(want[e]) * want[e];
      noise += d * d;
    }
  }
  return sums;
}

double snr_db(const std::pair<double, double>& s) {
  if (s.second == 0.0) return s.first == 0.0 ? 0.0 : INFINITY;
  return 10.0 * std::log10(s.first / s.second);
}

}  // namespace

Int8Report measure_int8_error(const Int8ErrorMeter& meter, const std::vector<uint8_t>& int8_plan,
                              const Int8Options& options, const std::vector<Int8Step>& steps) {
  const PlanPtr fp32 = load_plan(meter.fp32_plan(), "INT8 report: loading the FP32 CPU plan");
  const PlanPtr int8 = load_plan(int8_plan, "INT8 report: loading the INT8 CPU plan");
  std::map<std::string, float> watched;
  for (const Int8Step& s : steps) watched[s.output] = s.y_scale;
  for (const std::string& o : meter.output_names()) watched.emplace(o, 0.f);
  // Per sample, added up in sample order: the numbers do not depend on the thread count.
  std::vector<Sums> per_sample(meter.samples());
  parallel_for(meter.samples(), 0, [&](size_t i) {
    per_sample[i] = run_sample(fp32.get(), int8.get(), meter.set(), watched, i);
  });
  Sums total;
  for (const Sums& sample : per_sample) {
    for (const auto& [name, v] : sample) {
      total[name].first += v.first;
      total[name].second += v.second;
    }
  }
  std::vector<double> noise;  // the outputs' relative noise power, as Int8ErrorMeter has it
  for (const std::string& o : meter.output_names()) {
    const auto& [signal, err] = total[o];
    noise.push_back(err == 0.0 ? 0.0 : signal == 0.0 ? INFINITY : err / signal);
  }
  const std::vector<double> shares = meter.shares(options, steps, noise);
  Int8Report report;
  report.samples = meter.samples();
  for (size_t i = 0; i < steps.size(); ++i) {
    const Int8Step& s = steps[i];
    report.rows.push_back({s.step, s.op, s.output, s.y_scale, snr_db(total[s.output]), shares[i]});
  }
  for (const std::string& o : meter.output_names())
    report.rows.push_back({"(output)", "", o, 0.f, snr_db(total[o]), -1.0});
  return report;
}

std::string format_int8_report(const Int8Report& r) {
  std::string out = cat("INT8 error against FP32 over ", r.samples,
                        " calibration samples. SNR: of each INT8 step's output, errors of the "
                        "steps before it included;\nshare: of the graph outputs' error, measured "
                        "by moving the step alone back to float.\n");
  char line[512];
  std::snprintf(line, sizeof line, "  %-48s %-16s %-12s %8s %7s\n", "step", "op", "out scale",
                "SNR dB", "share");
  out += line;
  for (const Int8ReportRow& row : r.rows) {
    const bool output = row.step == "(output)";
    const std::string name = output ? "output " + row.tensor : row.step;
    const std::string share = output ? "" : cat(std::lround(row.share * 1000) / 10.0, "%");
    std::snprintf(line, sizeof line, "  %-48.48s %-16.16s %-12s %8.1f %7s\n", name.c_str(),
                  row.op.c_str(), row.scale > 0.f ? cat(row.scale).c_str() : "float", row.snr_db,
                  share.c_str());
    out += line;
  }
  if (r.max_error > 0.0) {
    out += cat("--int8-max-error ", r.max_error, ": ", r.moved.size(),
               " steps moved back to float", r.moved.empty() ? "" : ":");
    for (const std::string& m : r.moved) out += " " + m;
    out += "\n";
  }
  return out;
}

std::string int8_report_json(const Int8Report& r) {
  auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      if (static_cast<unsigned char>(c) >= 0x20) q += c;
    }
    return q + "\"";
  };
  auto number = [](double v) {  // JSON has no infinity or NaN
    char text[32];
    std::snprintf(text, sizeof text, "%.4g", v);
    return std::isfinite(v) ? std::string(text) : std::string("null");
  };
  std::string out = cat("{\"samples\": ", r.samples, ", \"steps\": [");
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const Int8ReportRow& row = r.rows[i];
    out += cat(i ? ", " : "", "{\"step\": ", quoted(row.step), ", \"op\": ", quoted(row.op),
               ", \"tensor\": ", quoted(row.tensor), ", \"scale\": ", row.scale,
               ", \"snr_db\": ", number(row.snr_db),
               ", \"share\": ", row.share < 0.0 ? "null" : number(row.share), "}");
  }
  out += "], \"max_error\": " + (r.max_error > 0.0 ? number(r.max_error) : "null") +
         ", \"moved_to_fp16\": [";
  for (size_t i = 0; i < r.moved.size(); ++i) out += cat(i ? ", " : "", quoted(r.moved[i]));
  return out + "]}\n";
}

}  // namespace jetplan::converter
