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
#include "kernels/cpu/half.h"

namespace jetplan::converter {
namespace {

void check(jp_status status, const std::string& what) {
  check_runtime(status, "INT8 report: " + what);
}

PlanPtr load(const std::vector<uint8_t>& bytes, const char* which) {
  jp_plan* plan = nullptr;
  check(jp_plan_load_buffer(bytes.data(), bytes.size(), JP_LOAD_COPY, &plan), which);
  return PlanPtr(plan);
}

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
  std::vector<float>& v = c->values[name];
  v.resize(n);
  for (size_t i = 0; i < n; ++i) {
    if (dtype == JP_INT8)
      v[i] = static_cast<const int8_t*>(data)[i] * it->second;
    else if (dtype == JP_FLOAT16)
      v[i] = kernels::half_to_float(static_cast<const uint16_t*>(data)[i]);
    else if (dtype == JP_FLOAT32)
      v[i] = static_cast<const float*>(data)[i];
    else
      v[i] = NAN;  // not a tensor the INT8 pass writes; shows as a NaN SNR
  }
}

// One thread's half of the work: its own contexts, samples t, t + threads, ...; sums of ref^2 and
// (int8 - ref)^2 per tensor.
struct Sums {
  std::map<std::string, std::pair<double, double>> by_tensor;
  std::string error;
};

void run_samples(const jp_plan* fp32, const jp_plan* int8, const CalibrationSet& set,
                 const std::map<std::string, float>& watched, size_t first, size_t step,
                 size_t count, Sums* sums) {
  try {
    jp_context* a = nullptr;
    jp_context* b = nullptr;
    check(jp_context_create(fp32, nullptr, &a), "a context of the FP32 plan");
    ContextPtr ca(a);
    check(jp_context_create(int8, nullptr, &b), "a context of the INT8 plan");
    ContextPtr cb(b);
    Capture ref, got;
    ref.watched = got.watched = &watched;
    check(jp_context_set_step_observer(a, observe, &ref), "observing the FP32 plan");
    check(jp_context_set_step_observer(b, observe, &got), "observing the INT8 plan");
    for (size_t i = first; i < count; i += step) {
      const std::vector<std::vector<uint8_t>> inputs = set.load(i);
      for (size_t k = 0; k < inputs.size(); ++k) {
        // Both plans bind their inputs in the draft's order, the set's order.
        const auto index = static_cast<int32_t>(k);
        const std::string& name = set.inputs()[k].name;
        check(jp_context_set_input(a, index, inputs[k].data(), inputs[k].size()), name);
        check(jp_context_set_input(b, index, inputs[k].data(), inputs[k].size()), name);
      }
      check(jp_context_run(a), "running the FP32 plan on " + set.sample_path(i));
      check(jp_context_run(b), "running the INT8 plan on " + set.sample_path(i));
      for (const auto& [name, want] : ref.values) {
        const auto it = got.values.find(name);
        if (it == got.values.end() || it->second.size() != want.size()) continue;
        auto& [signal, noise] = sums->by_tensor[name];
        for (size_t e = 0; e < want.size(); ++e) {
          const double d = double(it->second[e]) - want[e];
          signal += double(want[e]) * want[e];
          noise += d * d;
        }
      }
    }
  } catch (const ConvertError& e) {
    sums->error = e.what();
  } catch (const std::exception& e) {  // out of memory: reported, not a terminate in a thread
    sums->error = cat("INT8 report: ", e.what());
  }
}

double snr_db(const std::pair<double, double>& s) {
  if (s.second == 0.0) return s.first == 0.0 ? 0.0 : INFINITY;
  return 10.0 * std::log10(s.first / s.second);
}

}  // namespace

Int8Report measure_int8_error(const std::vector<uint8_t>& fp32_plan,
                              const std::vector<uint8_t>& int8_plan, const CalibrationSet& set,
                              const std::vector<Int8Step>& steps, size_t max_samples) {
  const PlanPtr fp32 = load(fp32_plan, "loading the FP32 CPU plan");
  const PlanPtr int8 = load(int8_plan, "loading the INT8 CPU plan");
  std::map<std::string, float> watched;
  for (const Int8Step& s : steps) watched[s.output] = s.y_scale;
  std::vector<std::string> outputs;
  for (int32_t i = 0; i < jp_plan_num_outputs(int8.get()); ++i) {
    jp_tensor_desc d;
    check(jp_plan_output_desc(int8.get(), i, &d), "the INT8 plan's outputs");
    outputs.push_back(d.name);
    watched.emplace(d.name, 0.f);
  }
  const size_t count = max_samples > 0 ? std::min(max_samples, set.size()) : set.size();
  const size_t threads =
      std::max<size_t>(1, std::min<size_t>(count, std::thread::hardware_concurrency()));
  std::vector<Sums> sums(threads);
  std::vector<std::thread> workers;
  for (size_t t = 0; t < threads; ++t) {
    workers.emplace_back(run_samples, fp32.get(), int8.get(), std::cref(set), std::cref(watched),
                         t, threads, count, &sums[t]);
  }
  for (std::thread& w : workers) w.join();
  std::map<std::string, std::pair<double, double>> total;
  for (const Sums& s : sums) {
    if (!s.error.empty()) throw ConvertError(s.error);
    for (const auto& [name, v] : s.by_tensor) {
      total[name].first += v.first;
      total[name].second += v.second;
    }
  }
  Int8Report report;
  report.samples = count;
  for (const Int8Step& s : steps)
    report.rows.push_back({s.step, s.output, s.y_scale, snr_db(total[s.output])});
  for (const std::string& o : outputs)
    report.rows.push_back({"(output)", o, 0.f, snr_db(total[o])});
  return report;
}

std::string format_int8_report(const Int8Report& r) {
  std::string out = cat("INT8 error against FP32 over ", r.samples,
                        " calibration samples (SNR of each INT8 step's output, errors of the "
                        "steps before it included):\n");
  char line[512];
  std::snprintf(line, sizeof line, "  %-56s %-10s %8s\n", "step", "out scale", "SNR dB");
  out += line;
  for (const Int8ReportRow& row : r.rows) {
    const std::string name = row.step == "(output)" ? "output " + row.tensor : row.step;
    std::snprintf(line, sizeof line, "  %-56.56s %-10s %8.1f\n", name.c_str(),
                  row.scale > 0.f ? cat(row.scale).c_str() : "float", row.snr_db);
    out += line;
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
  std::string out = cat("{\"samples\": ", r.samples, ", \"steps\": [");
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const Int8ReportRow& row = r.rows[i];
    char snr[32];
    std::snprintf(snr, sizeof snr, "%.3f", row.snr_db);
    out += cat(i ? ", " : "", "{\"step\": ", quoted(row.step), ", \"tensor\": ", quoted(row.tensor),
               ", \"scale\": ", row.scale,
               ", \"snr_db\": ", std::isfinite(row.snr_db) ? snr : "null",
               "}");
  }
  return out + "]}\n";
}

}  // namespace jetplan::converter
