//===- symc-run.cpp - run a compiled artifact -----------------------------===//
//
//   symc-run model.so --params model-0000.params --input data=img.npy \
//            --output out.npy [--bench N] [--threads N]
//            [--compare ref.npy --rtol 1e-5 --atol 1e-5]
//   symc-run model.so ... --backward [--head-grad OUTPUT=g.npy] [--grad-req NAME=add]
//            [--grads-in init.params] --grads-out grads.params
//
// Links only libsymrt: what a deployment needs.
//
//===----------------------------------------------------------------------===//
#include "symc/Executor.h"
#include "symc/Npy.h"

#include <algorithm>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>
#include <type_traits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>
#include <regex>
#include <set>

using namespace symc;

namespace {

struct Options {
  std::string artifact, prefix = "symc", sha256, params;
  std::vector<std::pair<std::string, std::string>> inputs; // name (or "") -> file
  std::vector<std::string> outputs, compares;
  int bench = 0, threads = 0;
  std::optional<uint64_t> seed;
  bool isTrain = false, backward = false, allowMissing = false, debugStr = false, monitorAll = false;
  std::string optimizedSymbol;
  std::optional<std::string> monitor; // a regex the names must match from their start
  std::string compareMonitor;         // node outputs saved from MXNet's monitor
  std::vector<std::pair<std::string, std::string>> headGrads; // output name -> file
  std::map<std::string, std::string> gradReqs;
  std::string gradsIn, gradsOut;
  double rtol = 1e-5, atol = 1e-5;
  int gpu = 0;
};

[[noreturn]] void usageError(const std::string &message) { throw Error("UsageError", message); }

/// Splits NAME=VALUE.
std::pair<std::string, std::string> nameValue(const std::string &option, const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    usageError(option + " " + text + ": expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

/// The whole of `text` as a number in [lo, hi], else a usage error.
template <typename T> T number(const std::string &option, const std::string &text, T lo, T hi) {
  std::istringstream in(text);
  T value{};
  if (text.empty() || text[0] == '+' || (std::is_unsigned_v<T> && text[0] == '-') || !(in >> value) || !in.eof() || value < lo || value > hi) {
    std::ostringstream range;
    range << lo << ".." << hi;
    usageError(option + ": '" + text + "' is not a number in " + range.str());
  }
  return value;
}

/// One flag: how it is written, what it does, and what it does to Options
/// with its value (empty for flags that take none).
struct Flag {
  const char *name, *value, *help;
  std::function<void(Options &, const std::string &)> apply;
};

const std::vector<Flag> &flags() {
  constexpr int kMaxInt = std::numeric_limits<int>::max();
  static const std::vector<Flag> all = {
      {"--params", "FILE.params", "parameters (arg:NAME / aux:NAME, as MXNet saves a checkpoint)",
       [](Options &o, const std::string &v) { o.params = v; }},
      {"--input", "NAME=FILE.npy", "an input array; FILE.params gives every argument it holds (repeatable)",
       [](Options &o, const std::string &v) {
         size_t eq = v.find('=');
         o.inputs.emplace_back(eq == std::string::npos ? "" : v.substr(0, eq),
                               eq == std::string::npos ? v : v.substr(eq + 1));
       }},
      {"--allow-missing", nullptr, "run with zeros for arguments no --params, --input or embedded params give",
       [](Options &o, const std::string &) { o.allowMissing = true; }},
      {"--output", "OUT.npy", "save the next output ('-' skips one; repeatable)",
       [](Options &o, const std::string &v) { o.outputs.push_back(v); }},
      {"--compare", "REF.npy", "compare the next output with REF.npy ('-' skips one; repeatable)",
       [](Options &o, const std::string &v) { o.compares.push_back(v); }},
      {"--rtol", "R", "relative tolerance of --compare (1e-5)",
       [](Options &o, const std::string &v) { o.rtol = number("--rtol", v, 0.0, 1e300); }},
      {"--atol", "A", "absolute tolerance of --compare (1e-5)",
       [](Options &o, const std::string &v) { o.atol = number("--atol", v, 0.0, 1e300); }},
      {"--bench", "N", "time N more runs and print the median, p10, p90 and min",
       [](Options &o, const std::string &v) { o.bench = number("--bench", v, 0, kMaxInt); }},
      {"--gpu", "N", "the GPU a CUDA artifact (symc compile --target cuda) runs on (0)",
       [](Options &o, const std::string &v) { o.gpu = number("--gpu", v, 0, 1024); }},
      {"--threads", "N", "threads of the generated code (0: OMP_NUM_THREADS, else every CPU)",
       [](Options &o, const std::string &v) { o.threads = number("--threads", v, 0, 4096); }},
      {"--seed", "N", "seed of Dropout and rrelu draws (mx.random.seed)",
       [](Options &o, const std::string &v) {
         o.seed = number<uint64_t>("--seed", v, 0, std::numeric_limits<uint64_t>::max());
       }},
      {"--monitor", "PATTERN", "print the RMS of every node output whose name matches (MXNet's Monitor)",
       [](Options &o, const std::string &v) { o.monitor = v; }},
      {"--compare-monitor", "REF.params",
       "compare every node output with the arrays of that name in REF.params (saved from MXNet's monitor) "
       "and name the first node that differs",
       [](Options &o, const std::string &v) { o.compareMonitor = v; }},
      {"--monitor-all", nullptr, "with --monitor or --compare-monitor: each node's inputs too (monitor_all)",
       [](Options &o, const std::string &) { o.monitorAll = true; }},
      {"--debug-str", nullptr, "print the executor's debug_str() (its graph and planned memory)",
       [](Options &o, const std::string &) { o.debugStr = true; }},
      {"--optimized-symbol", "OUT.json", "save get_optimized_symbol(): symbol JSON MXNet 1.9.1 loads",
       [](Options &o, const std::string &v) { o.optimizedSymbol = v; }},
      {"--name", "PREFIX", "the artifact's symbol prefix (symc compile --name; default symc)",
       [](Options &o, const std::string &v) { o.prefix = v; }},
      {"--sha256", "HEX", "refuse the artifact unless its seal holds this digest (symc verify prints it)",
       [](Options &o, const std::string &v) { o.sha256 = v; }},
      {"--train", nullptr, "forward(is_train=True)", [](Options &o, const std::string &) { o.isTrain = true; }},
      {"--backward", nullptr, "a training step: forward(is_train=True), then backward",
       [](Options &o, const std::string &) { o.backward = o.isTrain = true; }},
      {"--head-grad", "OUTPUT=G.npy", "the head gradient of a non-loss output (repeatable)",
       [](Options &o, const std::string &v) { o.headGrads.push_back(nameValue("--head-grad", v)); }},
      {"--grad-req", "NAME=write|add|null", "an argument's grad_req (default write; repeatable)",
       [](Options &o, const std::string &v) { o.gradReqs.insert(nameValue("--grad-req", v)); }},
      {"--grads-in", "INIT.params", "initial gradient buffers (what grad_req add adds to)",
       [](Options &o, const std::string &v) { o.gradsIn = v; }},
      {"--grads-out", "GRADS.params", "save the gradients (and aux states as aux:NAME)",
       [](Options &o, const std::string &v) { o.gradsOut = v; }},
  };
  return all;
}

std::string usage() {
  std::string text = "usage: symc-run MODEL.so [options]\n"
                     "Runs a symc-compiled model through the Executor: binds it, fills its arguments,\n"
                     "runs forward (and backward), saves, compares and times the outputs.\n\noptions:\n";
  for (const Flag &flag : flags()) {
    std::string spelled = std::string(flag.name) + (flag.value ? std::string(" ") + flag.value : "");
    text += "  " + spelled + std::string(spelled.size() < 30 ? 30 - spelled.size() : 1, ' ') + flag.help + "\n";
  }
  return text + "  -h, --help                    this help\n"
                "Flags take their value as --flag VALUE or --flag=VALUE.\n";
}

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << usage();
      std::exit(0);
    }
    if (arg.empty() || arg[0] != '-') {
      if (!o.artifact.empty())
        usageError("unexpected argument " + arg);
      o.artifact = arg;
      continue;
    }
    size_t eq = arg.find('=');
    std::string name = arg.substr(0, eq);
    auto flag = std::find_if(flags().begin(), flags().end(), [&](const Flag &f) { return name == f.name; });
    if (flag == flags().end())
      usageError("unknown option " + name);
    std::string value;
    if (!flag->value && eq != std::string::npos)
      usageError(name + " takes no value");
    if (flag->value && eq != std::string::npos)
      value = arg.substr(eq + 1);
    else if (flag->value && i + 1 < argc)
      value = argv[++i];
    else if (flag->value)
      usageError(name + " needs a value: " + name + " " + flag->value);
    flag->apply(o, value);
  }
  if (o.artifact.empty())
    usageError("no artifact given");
  if (!o.backward && (!o.headGrads.empty() || !o.gradReqs.empty() || !o.gradsOut.empty() || !o.gradsIn.empty()))
    usageError("--head-grad, --grad-req, --grads-in and --grads-out need --backward");
  return o;
}

ParamsFile readParams(const std::string &path) {
  ParamsFile file;
  std::string error;
  if (!loadParams(path, file, error))
    throw Error("MXNetError", path + ": " + error);
  return file;
}

ArrayDict readInputs(const Options &o) {
  ArrayDict inputs;
  for (const auto &[name, file] : o.inputs) {
    if (file.size() > 7 && file.compare(file.size() - 7, 7, ".params") == 0) {
      for (const auto &[key, array] : splitParams(readParams(file)).args)
        if (name.empty() || name == key)
          inputs[key] = array;
    } else {
      if (name.empty())
        throw Error("UsageError", "--input " + file + " needs a name: NAME=" + file);
      inputs[name] = loadNpy(file);
    }
  }
  return inputs;
}

/// Times forward, or with --backward a training step (forward and backward).
void bench(Executor &exec, const Options &o, const std::vector<NDArray> &heads) {
  std::vector<double> ms;
  for (int i = 0; i < o.bench; ++i) {
    auto start = std::chrono::steady_clock::now();
    exec.forward(o.isTrain);
    if (o.backward)
      exec.backward(heads);
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2];
  double p10 = ms[ms.size() / 10], p90 = ms[ms.size() * 9 / 10];
  std::printf("%s: median %.3f ms, p10 %.3f ms, p90 %.3f ms, min %.3f ms (%d runs)\n",
              o.backward ? "forward+backward" : "forward", median, p10, p90, ms.front(), o.bench);
}

/// Reports the worst element of `got` against `ref` (named `label`); false
/// when it is outside rtol/atol.
bool compare(const NDArray &got, const NDArray &ref, const std::string &label, const Options &o) {
  if (ref.shape() != got.shape()) {
    std::printf("compare %s: shape %s differs from %s\n", label.c_str(), shapeToString(got.shape()).c_str(),
                shapeToString(ref.shape()).c_str());
    return false;
  }
  NDArray a(got.shape(), DType::Float64), b(ref.shape(), DType::Float64);
  a.copyFrom(got);
  b.copyFrom(ref);
  size_t worst = 0;
  double worstExcess = -INFINITY;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = a.data<double>()[i], y = b.data<double>()[i];
    double excess = std::fabs(x - y) - (o.atol + o.rtol * std::fabs(y));
    if (std::isnan(x) != std::isnan(y))
      excess = INFINITY;
    if (excess > worstExcess)
      worstExcess = excess, worst = i;
  }
  bool ok = a.size() == 0 || worstExcess <= 0;
  if (a.size())
    std::printf("compare %s: %s, worst element %zu: got %.9g, expected %.9g (rtol %g, atol %g)\n",
                label.c_str(), ok ? "ok" : "MISMATCH", worst, a.data<double>()[worst],
                b.data<double>()[worst], o.rtol, o.atol);
  return ok;
}

/// null without --backward; else the compiled gradients, write unless --grad-req says.
GradReqSpec gradReqsFor(const Artifact &artifact, const Options &o) {
  if (!o.backward)
    return std::string("null");
  const Manifest &m = artifact.manifest();
  if (!m.backward)
    throw Error("MXNetError", o.artifact + " has no backward: compile it with symc compile --train");
  std::map<std::string, std::string> reqs;
  for (const TensorSpec &arg : m.arguments)
    reqs[arg.name] = "null";
  for (const TensorSpec &grad : m.backward->gradients)
    reqs[grad.name] = "write";
  for (const auto &[name, req] : o.gradReqs) {
    if (!reqs.count(name))
      throw Error("UsageError", "--grad-req " + name + ": not an argument");
    reqs[name] = req;
  }
  return reqs;
}

/// Head gradients by output position, --grads-in, backward, --grads-out;
/// returns the head gradients.
std::vector<NDArray> runBackward(Executor &exec, const Options &o) {
  std::vector<std::string> outputs = exec.listOutputs();
  std::vector<NDArray> heads(outputs.size());
  for (const auto &[name, file] : o.headGrads) {
    auto it = std::find(outputs.begin(), outputs.end(), name);
    if (it == outputs.end())
      throw Error("UsageError", "--head-grad " + name + ": not an output");
    heads[it - outputs.begin()] = loadNpy(file);
  }
  ArrayDict grads = exec.gradMap();
  if (!o.gradsIn.empty())
    for (const auto &[name, array] : splitParams(readParams(o.gradsIn)).args)
      if (auto it = grads.find(name); it != grads.end() && !it->second.isNone())
        it->second.copyFrom(array, "--grads-in gradient '" + name + "'");
  exec.backward(heads);
  if (o.gradsOut.empty())
    return heads;
  // Gradients under their argument names, aux states as "aux:NAME".
  ParamsFile file;
  for (const auto &[name, grad] : grads)
    if (!grad.isNone())
      file.arrays.push_back(toRecord(name, grad));
  for (const auto &[name, aux] : exec.auxMap())
    file.arrays.push_back(toRecord("aux:" + name, aux));
  std::string error;
  if (!saveParams(o.gradsOut, file, error))
    throw Error("MXNetError", o.gradsOut + ": " + error);
  return heads;
}

/// Every argument and aux state gets its value from --input, --params or the
/// artifact's embedded parameters; only labels may be left out of inference.
void checkNothingMissing(const Artifact &artifact, const Options &o, const ArrayDict &inputs,
                         const ParamArrays &params) {
  const Manifest &m = artifact.manifest();
  for (const auto &input : inputs)
    if (std::none_of(m.arguments.begin(), m.arguments.end(), [&](const TensorSpec &s) { return s.name == input.first; }))
      throw Error("TypeError", "Unknown argument " + input.first);
  ParamArrays embedded = artifact.embeddedParams() ? splitParams(*artifact.embeddedParams()) : ParamArrays();
  auto given = [&](const std::string &name, bool isAux) {
    const ArrayDict &fromParams = isAux ? params.aux : params.args;
    const ArrayDict &fromEmbedded = isAux ? embedded.aux : embedded.args;
    bool isLabel = std::find(m.labels.begin(), m.labels.end(), name) != m.labels.end();
    return (!isAux && inputs.count(name)) || fromParams.count(name) || fromEmbedded.count(name) ||
           (isLabel && !o.backward);
  };
  std::string missing;
  for (const auto *specs : {&m.arguments, &m.auxStates})
    for (const TensorSpec &spec : *specs)
      if (!given(spec.name, specs == &m.auxStates))
        missing += (missing.empty() ? "'" : ", '") + spec.name + "'";
  if (!missing.empty())
    throw Error("MXNetError", "no value for " + missing +
                                  ": give it with --params FILE.params or --input NAME=FILE.npy "
                                  "(--allow-missing runs on zeros)");
}

/// Prints "NAME  RMS" for each monitored array whose name matches `pattern`
/// from its start, as mx.monitor.Monitor's default statistic.
Executor::MonitorCallback printStatistics(const std::string &pattern) {
  std::regex re;
  try {
    re = std::regex(pattern);
  } catch (const std::regex_error &e) {
    throw Error("UsageError", "--monitor " + pattern + ": " + e.what());
  }
  return [re](const std::string &name, const NDArray &array) {
    if (!std::regex_search(name, re, std::regex_constants::match_continuous))
      return;
    NDArray values(array.shape(), DType::Float64);
    values.copyFrom(array);
    double sum = 0;
    for (size_t i = 0; i < values.size(); ++i)
      sum += values.data<double>()[i] * values.data<double>()[i];
    std::printf("monitor %-30s %.9g\n", name.c_str(), std::sqrt(sum / std::max<size_t>(values.size(), 1)));
  };
}

/// --compare-monitor: each monitored array against the reference of its name,
/// in MXNet's node order, remembering the first that differs.
struct MonitorComparison {
  ArrayDict references;
  std::set<std::string> seen;
  std::string firstMismatch;

  Executor::MonitorCallback callback(const Options &o) {
    return [this, &o](const std::string &name, const NDArray &array) {
      auto ref = references.find(name);
      if (ref == references.end())
        return;
      seen.insert(name);
      if (!compare(array, ref->second, name, o) && firstMismatch.empty())
        firstMismatch = name;
    };
  }

  /// Prints the verdict; false when a node differs.
  bool report() const {
    for (const auto &[name, array] : references)
      if (!seen.count(name))
        std::printf("compare %s: not reported by this artifact's monitor\n", name.c_str());
    if (!firstMismatch.empty())
      std::printf("first divergence: %s\n", firstMismatch.c_str());
    else
      std::printf("every compared node agrees (%zu arrays)\n", seen.size());
    return firstMismatch.empty();
  }
};



int run(const Options &o) {
  std::shared_ptr<const Artifact> artifact = Artifact::load(o.artifact, o.prefix, o.sha256);
  ParamArrays params = o.params.empty() ? ParamArrays() : splitParams(readParams(o.params));
  ArrayDict inputs = readInputs(o);
  for (const auto &input : inputs) // an --input replaces the array of that name in --params
    params.args.erase(input.first);
  // Arrays with a dynamic batch dim give it its size; the others are checked
  // when they are copied in, with MXNet's messages.
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const TensorSpec &spec : artifact->manifest().arguments)
    for (const ArrayDict *given : {&inputs, &params.args})
      if (auto array = given->find(spec.name); array != given->end() && spec.isDynamic())
        shapes[spec.name] = array->second.shape();
  Context ctx = artifact->manifest().runsOnGpu() ? Context::gpu(o.gpu) : Context::cpu();
  Executor exec = Executor::simpleBind(artifact, ctx, shapes, gradReqsFor(*artifact, o));
  exec.setNumThreads(o.threads);
  if (o.seed)
    seedRandom(*o.seed);
  if (!o.params.empty())
    exec.copyParamsFrom(params.args, params.aux);
  if (!o.allowMissing)
    checkNothingMissing(*artifact, o, inputs, params);
  MonitorComparison comparison;
  std::vector<Executor::MonitorCallback> callbacks;
  if (o.monitor)
    callbacks.push_back(printStatistics(*o.monitor));
  if (!o.compareMonitor.empty()) {
    comparison.references = splitParams(readParams(o.compareMonitor)).args; // bare names
    callbacks.push_back(comparison.callback(o));
  }
  if (!callbacks.empty())
    exec.setMonitorCallback(
        [callbacks](const std::string &name, const NDArray &array) {
          for (const Executor::MonitorCallback &callback : callbacks)
            callback(name, array);
        },
        o.monitorAll);
  exec.forward(o.isTrain, inputs);
  std::vector<NDArray> heads;
  if (o.backward)
    heads = runBackward(exec, o);
  if (o.bench > 0)
    bench(exec, o, heads);
  if (o.debugStr)
    std::cout << exec.debugStr();
  if (!o.optimizedSymbol.empty()) {
    std::ofstream out(o.optimizedSymbol);
    if (!(out << exec.optimizedSymbol()))
      throw Error("MXNetError", "cannot write " + o.optimizedSymbol);
  }
  const auto &outputs = exec.outputs();
  // --output and --compare are positional; '-' skips an output.
  for (size_t i = 0; i < o.outputs.size() && i < outputs.size(); ++i)
    if (o.outputs[i] != "-")
      saveNpy(o.outputs[i], outputs[i]);
  bool ok = o.compareMonitor.empty() || comparison.report();
  for (size_t i = 0; i < o.compares.size() && i < outputs.size(); ++i)
    if (o.compares[i] != "-")
      ok = compare(outputs[i], loadNpy(o.compares[i]), o.compares[i], o) && ok;
  return ok ? 0 : 2;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parseOptions(argc, argv));
  } catch (const Error &e) {
    std::fprintf(stderr, "symc-run: %s: %s\n", e.kind().c_str(), e.what());
    if (e.kind() == "UsageError")
      std::fputs("Try 'symc-run --help'.\n", stderr);
    return 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "symc-run: MXNetError: %s\n", e.what());
    return 1;
  } catch (...) {
    std::fputs("symc-run: MXNetError: unknown error\n", stderr);
    return 1;
  }
}
