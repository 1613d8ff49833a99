//===- Artifact.cpp - a compiled symbol, loaded ---------------------------===//
#include "symc/Artifact.h"

#include "Device.h"

#include "Json.h"
#include "symc/ArtifactSeal.h"

#include <algorithm>
#include <cctype>
#include <dlfcn.h>
#include <link.h>

namespace symc {

bool TensorSpec::isDynamic() const { return std::find(shape.begin(), shape.end(), -1) != shape.end(); }

bool TensorSpec::fits(const std::vector<int64_t> &given, int64_t &batch) const {
  if (given.size() != shape.size())
    return false;
  for (size_t i = 0; i < given.size(); ++i) {
    if (shape[i] >= 0 ? given[i] != shape[i] : batch >= 0 && given[i] != batch)
      return false;
    if (shape[i] < 0)
      batch = given[i];
  }
  return true;
}

bool Manifest::fits(const ShapeDict &shapes) const {
  int64_t batch = -1;
  for (const auto *specs : {&arguments, &auxStates})
    for (const TensorSpec &spec : *specs) {
      auto given = shapes.find(spec.name);
      if (given == shapes.end())
        continue;
      std::vector<int64_t> known = given->second;
      for (size_t d = 0; d < known.size() && d < spec.shape.size(); ++d)
        if (known[d] == 0 && spec.shape[d] >= 0)
          known[d] = spec.shape[d];
      if (!spec.fits(known, batch))
        return false;
    }
  return true;
}

std::pair<std::string, std::string> Manifest::describeFailure(const SymcRunError &error) const {
  if (error.check < 1 || static_cast<size_t>(error.check) > checks.size())
    return {"MXNetError",
            "the compiled code of '" + prefix + "' failed (run-time check " + std::to_string(error.check) + ")"};
  const RunTimeCheck &check = checks[error.check - 1];
  std::string message = check.message, kind = "MXNetError";
  for (size_t i = 0; i < 3; ++i)
    for (size_t at; (at = message.find("{" + std::to_string(i) + "}")) != std::string::npos;)
      message.replace(at, 3, std::to_string(error.values[i]));
  static const std::string indexError = "IndexError: ";
  if (message.compare(0, indexError.size(), indexError) == 0) {
    kind = "IndexError";
    message.erase(0, indexError.size());
  }
  return {kind, "Error in operator " + check.node + ": " + message};
}

namespace {

/// The largest dim, byte count or row count a manifest may state.
constexpr int64_t kMaxBytes = SYMC_MAX_ARRAY_BYTES;

TensorSpec readTensor(const json::Value &v) {
  TensorSpec spec;
  spec.name = v.at("name").str();
  for (const json::Value &d : v.at("shape").list())
    spec.shape.push_back(d.integer(-1, kMaxBytes)); // -1: the dynamic batch dim
  if (!dtypeFromName(v.at("dtype").str(), spec.dtype))
    throw Error("MXNetError", "manifest: unknown dtype '" + v.at("dtype").str() + "' of '" + spec.name + "'");
  return spec;
}

std::vector<TensorSpec> readTensors(const json::Value &list) {
  std::vector<TensorSpec> specs;
  for (const json::Value &v : list.list())
    specs.push_back(readTensor(v));
  return specs;
}

/// Whether this CPU has `feature` (one of the names symc records).
bool hostSupports(const std::string &feature) {
#if defined(__x86_64__)
  __builtin_cpu_init();
  if (feature == "avx") return __builtin_cpu_supports("avx");
  if (feature == "avx2") return __builtin_cpu_supports("avx2");
  if (feature == "fma") return __builtin_cpu_supports("fma");
  if (feature == "f16c") return __builtin_cpu_supports("f16c");
  if (feature == "avx512f") return __builtin_cpu_supports("avx512f");
  if (feature == "avx512bw") return __builtin_cpu_supports("avx512bw");
  if (feature == "avx512dq") return __builtin_cpu_supports("avx512dq");
  if (feature == "avx512vl") return __builtin_cpu_supports("avx512vl");
#endif
  return false;
}

/// Refuses code this CPU cannot run, instead of dying on SIGILL in forward.
void checkCpuFeatures(const Manifest &m, const std::string &origin) {
  std::string missing;
  for (const std::string &feature : m.cpuFeatures)
    if (!hostSupports(feature))
      missing += (missing.empty() ? "" : ", ") + feature;
  if (!missing.empty())
    throw Error("MXNetError", origin + " was compiled for CPU features this CPU lacks (" + missing +
                                  "); recompile it with symc compile --cpu=native on this machine");
}

template <typename Resolve> std::vector<Variant> readVariants(const json::Value &list, Resolve resolve) {
  std::vector<Variant> variants;
  for (const json::Value &v : list.list())
    variants.push_back({v.at("name").str(), v.at("is_train").flag(), resolve(v.at("entry").str())});
  return variants;
}

/// An optional index, at most `max` (-1 when absent).
int readIndex(const json::Value &object, const char *key, int64_t max = INT32_MAX) {
  return object.has(key) ? static_cast<int>(object.at(key).integer(-1, max)) : -1;
}

std::string readString(const json::Value &object, const char *key) {
  return object.has(key) ? object.at(key).str() : "";
}

/// A monitored node's name, inputs and outputs (for backward nodes, with
/// the graph entries they read).
void readMonitorNode(const json::Value &n, size_t valueCount, MonitorNode &node) {
  int64_t maxIndex = static_cast<int64_t>(valueCount) - 1;
  node.name = n.at("name").str();
  for (const json::Value &in : n.at("inputs").list())
    node.inputs.push_back({in.at("name").str(), readString(in, "variable"), readIndex(in, "argument"),
                           readIndex(in, "value", maxIndex), readString(in, "node"), readIndex(in, "backward"),
                           std::max(readIndex(in, "index"), 0), std::max(readIndex(in, "version"), 0)});
  for (const json::Value &out : n.at("outputs").list())
    node.outputs.push_back(static_cast<int>(out.integer(-1, maxIndex))); // -1: an output with no value
}

template <typename Resolve> BackwardMonitorSpec readBackwardMonitor(const json::Value &backward, Resolve resolve) {
  BackwardMonitorSpec spec{resolve(backward.at("entry").str()), readTensors(backward.at("values")), {}, {}};
  for (const json::Value &n : backward.at("nodes").list()) {
    BackwardNodeSpec node;
    readMonitorNode(n, spec.values.size(), node);
    node.op = n.at("op").str();
    node.forward = n.at("forward").str();
    node.forwardAttrs = !n.has("forward_attrs") || n.at("forward_attrs").flag();
    for (const auto &[key, value] : n.at("attrs").members())
      node.attrs[key] = value.str();
    spec.nodes.push_back(std::move(node));
  }
  for (const json::Value &g : backward.at("gradients").list())
    spec.gradients.push_back({g.at("argument").str(), readString(g, "node"), readIndex(g, "backward"),
                              readIndex(g, "index")});
  return spec;
}

template <typename Resolve> MonitorSpec readMonitor(const json::Value &monitor, Resolve resolve) {
  MonitorSpec spec{readVariants(monitor.at("variants"), resolve), readTensors(monitor.at("values")), {}, {}, 0};
  for (const json::Value &n : monitor.at("nodes").list())
    readMonitorNode(n, spec.values.size(), spec.nodes.emplace_back());
  if (monitor.has("backward"))
    spec.backward = readBackwardMonitor(monitor.at("backward"), resolve);
  if (monitor.has("workspace_bytes"))
    spec.workspaceBytes = static_cast<size_t>(monitor.at("workspace_bytes").integer(0, kMaxBytes));
  return spec;
}

/// The prepare entry and its arrays; each reads inputs among the
/// manifest's `inputs` arguments and aux states.
template <typename Resolve> PrepareSpec readPrepare(const json::Value &prepare, size_t inputs, Resolve resolve) {
  PrepareSpec spec{resolve(prepare.at("entry").str()), {}};
  for (const json::Value &a : prepare.at("arrays").list()) {
    PreparedArraySpec array;
    array.what = a.at("what").str();
    array.spec.name = array.what;
    for (const json::Value &d : a.at("shape").list())
      array.spec.shape.push_back(d.integer(0, kMaxBytes));
    if (!dtypeFromName(a.at("dtype").str(), array.spec.dtype))
      throw Error("MXNetError", "manifest: unknown dtype '" + a.at("dtype").str() + "' of a prepared array");
    for (const json::Value &input : a.at("inputs").list()) {
      int64_t index = input.integer(INT32_MIN, INT32_MAX);
      if (index < 0 || index >= static_cast<int64_t>(inputs))
        throw Error("MXNetError", "manifest: prepared array '" + array.what + "' reads input " +
                                      std::to_string(index) + " of " + std::to_string(inputs) +
                                      " (arguments and aux states)");
      array.inputs.push_back(static_cast<int>(index));
    }
    spec.arrays.push_back(std::move(array));
  }
  return spec;
}

/// Parses the manifest; `resolve` maps an entry-point name to its address.
template <typename Resolve> Manifest readManifest(const std::string &text, Resolve resolve) {
  json::Value root = json::parse(text);
  Manifest m;
  m.abiVersion = static_cast<int>(root.at("abi_version").integer(0, INT32_MAX));
  if (m.abiVersion != kArtifactAbiVersion)
    throw Error("MXNetError", "artifact ABI version " + std::to_string(m.abiVersion) +
                                  " is not supported by this runtime (version " +
                                  std::to_string(kArtifactAbiVersion) + "); recompile it");
  m.prefix = root.at("prefix").str();
  m.arguments = readTensors(root.at("arguments"));
  m.auxStates = readTensors(root.at("aux_states"));
  m.outputs = readTensors(root.at("outputs"));
  for (const json::Value &n : root.at("nodes").list())
    m.nodes.push_back({n.at("op").str(), n.at("name").str()});
  for (const json::Value &n : root.at("train_sensitive_nodes").list())
    m.trainSensitiveNodes.push_back(n.str());
  if (root.has("symbol"))
    m.symbolJson = root.at("symbol").str();
  if (root.has("labels"))
    for (const json::Value &n : root.at("labels").list())
      m.labels.push_back(n.str());
  for (const json::Value &n : root.at("fixed_gammas").list())
    m.fixedGammas.push_back(n.str());
  for (const json::Value &c : root.at("checks").list())
    m.checks.push_back({c.at("node").str(), c.at("message").str()});
  m.workspaceBytes = static_cast<size_t>(root.at("workspace_bytes").integer(0, kMaxBytes));
  if (root.has("small_batch_workspace")) {
    const json::Value &small = root.at("small_batch_workspace");
    m.smallBatchRows = small.at("below_rows").integer(1, kMaxBytes);
    m.smallBatchWorkspaceBytes = static_cast<size_t>(small.at("bytes").integer(0, kMaxBytes));
  }
  for (const json::Value &f : root.at("cpu_features").list())
    m.cpuFeatures.push_back(f.str());
  if (root.has("device"))
    m.device = root.at("device").str();
  m.embeddedParams = root.at("embedded_params").flag();
  if (const json::Value &backward = root.at("backward"); backward.kind != json::Value::Null)
    m.backward = BackwardSpec{resolve(backward.at("entry").str()), readTensors(backward.at("head_gradients")),
                              readTensors(backward.at("saved")), readTensors(backward.at("gradients")),
                              readTensors(backward.at("aux_updates"))};
  m.variants = readVariants(root.at("variants"), resolve);
  if (root.has("monitor"))
    m.monitor = readMonitor(root.at("monitor"), resolve);
  if (root.has("prepare"))
    m.prepare = readPrepare(root.at("prepare"), m.arguments.size() + m.auxStates.size(), resolve);
  if (root.has("shape_variants"))
    for (const json::Value &prefix : root.at("shape_variants").list())
      m.shapeVariants.push_back(prefix.str());
  return m;
}

/// The embedded .params file, parsed; `where` names the artifact in errors.
ParamsFile readEmbeddedParams(ParamsAccessor accessor, const std::string &where) {
  if (!accessor)
    throw Error("MXNetError", where + ": its manifest lists embedded params, but it has no accessor");
  int64_t size = 0;
  const uint8_t *bytes = accessor(&size);
  ParamsFile file;
  std::string error;
  if (!parseParams(bytes, static_cast<size_t>(size), file, error))
    throw Error("MXNetError", where + ": embedded params: " + error);
  return file;
}

std::vector<std::string> namesOf(const std::vector<TensorSpec> &specs) {
  std::vector<std::string> names;
  for (const TensorSpec &spec : specs)
    names.push_back(spec.name);
  return names;
}

/// Whether two manifests have the same arguments, aux states and outputs.
bool sameInterface(const Manifest &a, const Manifest &b) {
  return namesOf(a.arguments) == namesOf(b.arguments) && namesOf(a.auxStates) == namesOf(b.auxStates) &&
         namesOf(a.outputs) == namesOf(b.outputs);
}

/// Hex digests compared without regard to case.
bool sameDigest(const std::string &a, const std::string &b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

/// Artifacts call libsymrt (symcParallelFor) through the global namespace,
/// where a program that loaded libsymrt with RTLD_LOCAL (Python's ctypes)
/// has not put it: this promotes the loaded library, once.
void exposeRuntimeToArtifacts() {
  static const bool exposed = [] {
    Dl_info info{};
    return dladdr(reinterpret_cast<void *>(&symcParallelFor), &info) && info.dli_fname &&
           dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  }();
  (void)exposed;
}

/// The addresses the loaded library `handle` occupies (its loadable
/// segments), or an empty range.
std::pair<uintptr_t, uintptr_t> addressRange(void *handle) {
  struct Search {
    uintptr_t base = 0, begin = UINTPTR_MAX, end = 0;
  } search;
  link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map)
    return {0, 0};
  search.base = map->l_addr;
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *s = static_cast<Search *>(data);
        if (info->dlpi_addr != s->base)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr) &segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD)
            continue;
          s->begin = std::min<uintptr_t>(s->begin, info->dlpi_addr + segment.p_vaddr);
          s->end = std::max<uintptr_t>(s->end, info->dlpi_addr + segment.p_vaddr + segment.p_memsz);
        }
        return 1;
      },
      &search);
  if (search.begin >= search.end)
    return {0, 0};
  return {search.begin, search.end};
}

/// dlclose()s an artifact's library, after libsymrt_cuda (where loaded)
/// forgets the kernels it loaded from it: a library loaded later may sit
/// at the same addresses.
void closeArtifactLibrary(void *handle) {
  if (const SymcDeviceAPI *device = loadedCudaDevice()) {
    auto [begin, end] = addressRange(handle);
    if (begin < end)
      device->forgetCode(reinterpret_cast<const void *>(begin), reinterpret_cast<const void *>(end));
  }
  dlclose(handle);
}

} // namespace

std::shared_ptr<const Artifact> Artifact::load(const std::string &path, const std::string &prefix,
                                               const std::string &sha256) {
  // A bare file name would make dlopen search the library path instead.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  // Before dlopen: mapping a truncated file faults, and its constructors run.
  std::string digest, error;
  if (!verifyArtifactSeal(file, digest, error))
    throw Error("MXNetError", "cannot load artifact " + path + ": " + error);
  if (!sha256.empty() && !sameDigest(digest, sha256))
    throw Error("MXNetError", "cannot load artifact " + path + ": its SHA-256 is " + digest + ", not the expected " +
                                  sha256);
  exposeRuntimeToArtifacts();
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle && std::string(dlerror()).find("undefined symbol: mgpu") != std::string::npos) {
    // A CUDA artifact: its launch code calls into libsymrt_cuda. Where that
    // cannot load (no driver), the artifact still loads, bound lazily, to
    // describe itself; binding it to a GPU then says what is missing.
    bool launchable = true;
    try {
      cudaDevice();
    } catch (const Error &) {
      launchable = false;
    }
    handle = dlopen(file.c_str(), (launchable ? RTLD_NOW : RTLD_LAZY) | RTLD_LOCAL);
  }
  if (!handle) {
    std::string error = dlerror();
    throw Error("MXNetError", "cannot load artifact " + path + ": " + error);
  }
  std::shared_ptr<void> library(handle, closeArtifactLibrary);
  std::shared_ptr<Artifact> artifact = fromLibrary(library, path, prefix);
  for (const std::string &variantPrefix : artifact->manifest_.shapeVariants) {
    std::shared_ptr<Artifact> variant = fromLibrary(library, path, variantPrefix);
    if (!sameInterface(artifact->manifest_, variant->manifest_))
      throw Error("MXNetError", path + ": shape variant '" + variantPrefix + "' is not compiled from the symbol of '" +
                                    prefix + "'");
    artifact->shapeVariants_.push_back(std::move(variant));
  }
  return artifact;
}

std::shared_ptr<Artifact> Artifact::fromLibrary(std::shared_ptr<void> library, const std::string &path,
                                                const std::string &prefix) {
  void *handle = library.get();
  std::shared_ptr<Artifact> artifact(new Artifact());
  artifact->library_ = std::move(library);
  auto manifestFn = reinterpret_cast<const char *(*)()>(dlsym(handle, (prefix + "_manifest").c_str()));
  if (!manifestFn)
    throw Error("MXNetError", path + " is not a symc artifact with prefix '" + prefix +
                                  "' (no " + prefix + "_manifest)");
  artifact->manifest_ = readManifest(manifestFn(), [&](const std::string &name) {
    auto entry = reinterpret_cast<EntryPoint>(dlsym(handle, name.c_str()));
    if (!entry)
      throw Error("MXNetError", path + ": entry point " + name + " is missing");
    return entry;
  });
  checkCpuFeatures(artifact->manifest_, path);
  if (artifact->manifest_.embeddedParams)
    artifact->params_ = readEmbeddedParams(
        reinterpret_cast<ParamsAccessor>(dlsym(handle, (prefix + "_params").c_str())), path);
  return artifact;
}

std::shared_ptr<const Artifact> Artifact::forShapes(const std::shared_ptr<const Artifact> &artifact,
                                                    const ShapeDict &shapes) {
  if (artifact->manifest_.fits(shapes))
    return artifact;
  for (const std::shared_ptr<const Artifact> &variant : artifact->shapeVariants_)
    if (variant->manifest_.fits(shapes))
      return variant;
  return nullptr;
}

std::shared_ptr<const Artifact> Artifact::fromEntryPoints(const char *manifestJson,
                                                          const LinkedEntryPoints &entries) {
  std::shared_ptr<Artifact> artifact(new Artifact());
  auto endsWith = [](const std::string &name, const std::string &suffix) {
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  artifact->manifest_ = readManifest(manifestJson, [&](const std::string &name) {
    bool isMonitor = endsWith(name, "_monitor");
    EntryPoint entry = endsWith(name, "_prepare")               ? entries.prepare
                       : endsWith(name, "_forward_train_monitor") ? entries.trainingMonitor
                       : endsWith(name, "_backward_monitor")   ? entries.backwardMonitor
                       : isMonitor                             ? entries.monitor
                       : endsWith(name, "_backward")           ? entries.backward
                       : endsWith(name, "_forward_train")      ? entries.trainingForward
                                                               : entries.forward;
    if (!entry && !isMonitor) // a program may link an artifact without its monitor
      throw Error("MXNetError", "the linked-in artifact's entry point " + name + " was not given");
    return entry;
  });
  if (auto &monitor = artifact->manifest_.monitor;
      monitor && std::any_of(monitor->variants.begin(), monitor->variants.end(), [](const Variant &v) { return !v.entry; }))
    monitor.reset();
  else if (monitor && monitor->backward && !monitor->backward->entry)
    monitor->backward.reset();
  checkCpuFeatures(artifact->manifest_, "the linked-in artifact");
  if (artifact->manifest_.embeddedParams)
    artifact->params_ = readEmbeddedParams(entries.params, "the linked-in artifact");
  return artifact;
}

} // namespace symc
