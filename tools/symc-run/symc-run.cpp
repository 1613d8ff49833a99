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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <map>
#include <optional>

using namespace symc;

namespace {

struct Options {
  std::string artifact, prefix = "symc", params;
  std::vector<std::pair<std::string, std::string>> inputs; // name (or "") -> file
  std::vector<std::string> outputs, compares;
  int bench = 0, threads = 0;
  std::optional<uint64_t> seed;
  bool isTrain = false, backward = false;
  std::vector<std::pair<std::string, std::string>> headGrads; // output name -> file
  std::map<std::string, std::string> gradReqs;
  std::string gradsIn, gradsOut;
  double rtol = 1e-5, atol = 1e-5;
};

/// Splits NAME=VALUE.
std::pair<std::string, std::string> nameValue(const std::string &option, const std::string &text) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw Error("UsageError", option + " " + text + ": expected NAME=VALUE");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

const char *kUsage =
    "usage: symc-run MODEL.so [--params FILE.params] [--input NAME=FILE.npy | --input FILE.params]...\n"
    "                [--output OUT.npy]... [--bench N] [--threads N] [--train] [--name PREFIX]\n"
    "                [--seed N] [--compare REF.npy]... [--rtol R] [--atol A]\n"
    "                [--backward [--head-grad OUTPUT=G.npy]... [--grad-req NAME=write|add|null]...\n"
    "                 [--grads-in INIT.params] --grads-out GRADS.params]\n"
    "--output and --compare name the outputs in order; '-' skips one.\n";

Options parseOptions(int argc, char **argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw Error("UsageError", arg + " needs a value");
      return argv[++i];
    };
    if (arg == "--params") o.params = value();
    else if (arg == "--input") {
      std::string v = value();
      size_t eq = v.find('=');
      o.inputs.emplace_back(eq == std::string::npos ? "" : v.substr(0, eq),
                            eq == std::string::npos ? v : v.substr(eq + 1));
    } else if (arg == "--output") o.outputs.push_back(value());
    else if (arg == "--compare") o.compares.push_back(value());
    else if (arg == "--bench") o.bench = std::stoi(value());
    else if (arg == "--threads") o.threads = std::stoi(value());
    else if (arg == "--seed") o.seed = std::stoull(value());
    else if (arg == "--rtol") o.rtol = std::stod(value());
    else if (arg == "--atol") o.atol = std::stod(value());
    else if (arg == "--name") o.prefix = value();
    else if (arg == "--train") o.isTrain = true;
    else if (arg == "--backward") o.backward = o.isTrain = true;
    else if (arg == "--head-grad") o.headGrads.push_back(nameValue(arg, value()));
    else if (arg == "--grad-req") o.gradReqs.insert(nameValue(arg, value()));
    else if (arg == "--grads-in") o.gradsIn = value();
    else if (arg == "--grads-out") o.gradsOut = value();
    else if (arg == "-h" || arg == "--help") { std::cout << kUsage; std::exit(0); }
    else if (!arg.empty() && arg[0] == '-') throw Error("UsageError", "unknown option " + arg);
    else if (o.artifact.empty()) o.artifact = arg;
    else throw Error("UsageError", "unexpected argument " + arg);
  }
  if (o.artifact.empty())
    throw Error("UsageError", "no artifact given");
  if (!o.backward && (!o.headGrads.empty() || !o.gradReqs.empty() || !o.gradsOut.empty() || !o.gradsIn.empty()))
    throw Error("UsageError", "--head-grad, --grad-req, --grads-in and --grads-out need --backward");
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

/// Reports the worst element; false when it is outside rtol/atol.
bool compare(const NDArray &got, const std::string &refPath, const Options &o) {
  NDArray ref = loadNpy(refPath);
  if (ref.shape() != got.shape()) {
    std::printf("compare %s: shape %s differs from %s\n", refPath.c_str(),
                shapeToString(got.shape()).c_str(), shapeToString(ref.shape()).c_str());
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
                refPath.c_str(), ok ? "ok" : "MISMATCH", worst, a.data<double>()[worst],
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
        it->second.copyFrom(array);
  exec.backward(heads);
  if (o.gradsOut.empty())
    return heads;
  // Gradients under their argument names, aux states as "aux:NAME".
  ParamsFile file;
  auto add = [&](const std::string &name, const NDArray &a) {
    NDArrayRecord record;
    record.name = name;
    record.shape = a.shape();
    record.dtype = a.dtype();
    record.data.assign(static_cast<const uint8_t *>(a.data()), static_cast<const uint8_t *>(a.data()) + a.nbytes());
    file.arrays.push_back(std::move(record));
  };
  for (const auto &[name, grad] : grads)
    if (!grad.isNone())
      add(name, grad);
  for (const auto &[name, aux] : exec.auxMap())
    add("aux:" + name, aux);
  std::string error;
  if (!saveParams(o.gradsOut, file, error))
    throw Error("MXNetError", o.gradsOut + ": " + error);
  return heads;
}

int run(const Options &o) {
  std::shared_ptr<const Artifact> artifact = Artifact::load(o.artifact, o.prefix);
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
  Executor exec = Executor::simpleBind(artifact, Context::cpu(), shapes, gradReqsFor(*artifact, o));
  exec.setNumThreads(o.threads);
  if (o.seed)
    seedRandom(*o.seed);
  if (!o.params.empty())
    exec.copyParamsFrom(params.args, params.aux);
  exec.forward(o.isTrain, inputs);
  std::vector<NDArray> heads;
  if (o.backward)
    heads = runBackward(exec, o);
  if (o.bench > 0)
    bench(exec, o, heads);
  const auto &outputs = exec.outputs();
  // --output and --compare are positional; '-' skips an output.
  for (size_t i = 0; i < o.outputs.size() && i < outputs.size(); ++i)
    if (o.outputs[i] != "-")
      saveNpy(o.outputs[i], outputs[i]);
  bool ok = true;
  for (size_t i = 0; i < o.compares.size() && i < outputs.size(); ++i)
    if (o.compares[i] != "-")
      ok = compare(outputs[i], o.compares[i], o) && ok;
  return ok ? 0 : 2;
}

} // namespace

int main(int argc, char **argv) {
  try {
    return run(parseOptions(argc, argv));
  } catch (const Error &e) {
    std::fprintf(stderr, "symc-run: %s: %s\n", e.kind().c_str(), e.what());
    if (e.kind() == "UsageError")
      std::fputs(kUsage, stderr);
    return 1;
  }
}
