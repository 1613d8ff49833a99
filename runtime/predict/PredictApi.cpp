//===- PredictApi.cpp - MXNet's c_predict_api.h on symc artifacts ---------===//
//
// A predictor is an inference Executor (every grad_req null) over the
// artifact compiled ahead of time for the symbol JSON and input shapes it is
// created with (symc/ArtifactKey.h), its parameters copied in from the
// .params bytes. Semantics: shared/mxnet-semantics.md section 8.2.
//
//===----------------------------------------------------------------------===//
#include "mxnet/c_predict_api.h"

#include "symc/ArtifactKey.h"
#include "symc/Executor.h"
#include "symc/c_api.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace symc;

namespace {

thread_local std::string lastError;

template <typename F> int guarded(F &&body) {
  try {
    body();
    return 0;
  } catch (const std::bad_alloc &) {
    lastError = "out of memory";
  } catch (const std::exception &e) {
    lastError = e.what();
  } catch (...) { // nothing escapes into a C caller
    lastError = "unknown error";
  }
  return -1;
}

[[noreturn]] void fail(const std::string &message) { throw Error("MXNetError", message); }

/// The inputs given to MXPredCreate* or MXPredReshape, in CSR form.
struct InputShapes {
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> dims;

  InputShapes(uint32_t count, const char **keys, const uint32_t *indptr, const uint32_t *data) {
    if (count && (!keys || !indptr || !data))
      fail("null input keys or shapes");
    for (uint32_t i = 0; i < count; ++i) {
      if (!keys[i] || indptr[i + 1] < indptr[i])
        fail("input " + std::to_string(i) + ": null key or decreasing input_shape_indptr");
      names.push_back(keys[i]);
      dims.emplace_back(data + indptr[i], data + indptr[i + 1]);
    }
  }

  ShapeDict dict() const {
    ShapeDict shapes;
    for (size_t i = 0; i < names.size(); ++i)
      shapes[names[i]] = dims[i];
    return shapes;
  }

  /// As `symc compile --shape` writes them; `dynamicBatch` puts '?' first.
  std::vector<ShapeText> text(bool dynamicBatch) const {
    std::vector<ShapeText> shapes;
    for (size_t i = 0; i < names.size(); ++i) {
      std::string dimsText;
      for (size_t d = 0; d < dims[i].size(); ++d)
        dimsText += (d ? "," : "") + (d == 0 && dynamicBatch ? std::string("?") : std::to_string(dims[i][d]));
      shapes.emplace_back(names[i], dimsText);
    }
    return shapes;
  }
};

/// SYMC_ARTIFACT_PATH's directories (':'-separated; the current one when unset).
std::vector<std::string> artifactDirs() {
  const char *env = std::getenv("SYMC_ARTIFACT_PATH");
  std::string path = env && *env ? env : ".";
  std::vector<std::string> dirs;
  for (size_t start = 0;;) {
    size_t colon = path.find(':', start);
    dirs.push_back(path.substr(start, colon - start));
    if (colon == std::string::npos)
      return dirs;
    start = colon + 1;
  }
}

bool fileExists(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "rb");
  if (f)
    std::fclose(f);
  return f != nullptr;
}

/// Artifacts are loaded once per process, whatever the number of predictors.
std::shared_ptr<const Artifact> loadShared(const std::string &path) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const Artifact>> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto artifact = loaded[path].lock())
    return artifact;
  auto artifact = Artifact::load(path);
  loaded[path] = artifact;
  return artifact;
}

std::string joinShapes(const std::vector<ShapeText> &shapes, const char *separator, const char *prefix) {
  std::string text;
  for (const auto &[name, dims] : shapes)
    text += (text.empty() ? "" : separator) + std::string(prefix) + name + "=" + dims;
  return text;
}

/// The artifact compiled for exactly these shapes, else `loaded` (a
/// reshaped predictor's) when one of its shape variants fits them, else one
/// compiled with a dynamic batch ('?'); the error says how to compile the
/// missing one.
std::shared_ptr<const Artifact> findArtifact(const std::string &json, const InputShapes &inputs,
                                             const std::vector<std::string> &outputs,
                                             const std::shared_ptr<const Artifact> &loaded = nullptr) {
  std::vector<std::string> dirs = artifactDirs();
  for (bool dynamicBatch : {false, true}) {
    if (dynamicBatch && loaded && Artifact::forShapes(loaded, inputs.dict()))
      return loaded;
    std::string key = artifactKey(json, inputs.text(dynamicBatch), outputs);
    for (const std::string &dir : dirs)
      if (std::string path = dir + "/" + key + ".so"; fileExists(path))
        return loadShared(path);
  }
  std::string outputOption;
  for (const std::string &output : outputs)
    outputOption += (outputOption.empty() ? " --outputs " : ",") + output;
  std::vector<ShapeText> shapes = inputs.text(false);
  fail("symc: no compiled artifact for this symbol (key " + artifactKey(json, shapes, outputs) +
       ") with input shapes " + joinShapes(shapes, ", ", "") + " in SYMC_ARTIFACT_PATH (" +
       (std::getenv("SYMC_ARTIFACT_PATH") ? std::getenv("SYMC_ARTIFACT_PATH") : "unset: the current directory") +
       "). Compile it ahead of time, from a file holding exactly the JSON text given here:\n  symc compile "
       "MODEL-symbol.json " + joinShapes(shapes, " ", "--shape ") + outputOption + " --predict-dir " +
       dirs.front() + "\n(or with a '?' batch dim, --shape data=?,..., for every batch size)");
}

struct Predictor {
  std::string json;
  std::vector<std::string> outputKeys;
  std::vector<std::string> inputNames;
  std::optional<Executor> exec;
  /// The artifact loaded (exec runs it or one of its shape variants).
  std::shared_ptr<const Artifact> artifact;
  /// What MXPredGetOutputShape hands out.
  std::vector<uint32_t> shapeBuffer;
};

Predictor &predictorOf(PredictorHandle h) {
  if (!h)
    fail("null PredictorHandle");
  return *static_cast<Predictor *>(h);
}

int argumentIndex(const Executor &exec, const std::string &name) {
  std::vector<std::string> names = exec.listArguments();
  auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

/// The batch size the inputs give the artifact's dynamic (-1) dims, or -1.
int64_t boundBatch(const Manifest &m, const std::map<std::string, std::vector<int64_t>> &shapes) {
  for (const TensorSpec &spec : m.arguments)
    if (auto it = shapes.find(spec.name); it != shapes.end())
      for (size_t d = 0; d < spec.shape.size() && d < it->second.size(); ++d)
        if (spec.shape[d] < 0)
          return it->second[d];
  return -1;
}

/// Binds `p` over `artifact`: inputs (and arguments with the batch dim, such
/// as labels) get their own zeroed arrays; parameters and aux states are
/// `shared`'s arrays when given (no copy), else fresh ones.
void bindPredictor(Predictor &p, std::shared_ptr<const Artifact> artifact, const InputShapes &inputs,
                   const Executor *shared) {
  p.artifact = artifact;
  ShapeDict shapes = inputs.dict();
  std::shared_ptr<const Artifact> variant = Artifact::forShapes(artifact, shapes);
  const Manifest &m = (variant ? variant : artifact)->manifest();
  if (!shared) {
    p.exec = Executor::simpleBind(std::move(artifact), Context::cpu(), shapes, std::string("null"));
    return;
  }
  int64_t batch = boundBatch(m, shapes);
  auto needed = [&](const TensorSpec &spec) {
    std::vector<int64_t> shape = spec.shape;
    std::replace(shape.begin(), shape.end(), int64_t(-1), batch);
    return shape;
  };
  ArrayList args;
  for (const TensorSpec &spec : m.arguments) {
    int index = argumentIndex(*shared, spec.name);
    auto given = shapes.find(spec.name);
    std::vector<int64_t> shape = given != shapes.end() ? given->second : needed(spec);
    if (given == shapes.end() && index >= 0 && shared->argArrays()[index].shape() == shape)
      args.push_back(shared->argArrays()[index]);
    else if (given != shapes.end() || spec.isDynamic())
      args.emplace_back(shape, spec.dtype);
    else
      fail("arg " + spec.name + " shape has been changed, only allow to change the shape of input data.");
  }
  ArrayList aux;
  for (size_t i = 0; i < m.auxStates.size(); ++i) {
    if (shared->auxArrays()[i].shape() != needed(m.auxStates[i]))
      fail("aux " + m.auxStates[i].name + " shape has been changed, only allow to change the shape of input data.");
    aux.push_back(shared->auxArrays()[i]);
  }
  p.exec = Executor::bind(std::move(artifact), Context::cpu(), args, std::nullopt, std::string("null"), aux);
}

/// MXPredCreate's parameters: names `arg:X` / `aux:X` of the symbol are
/// copied in, others ignored, missing ones left as they are (zeros).
void copyParams(Executor &exec, const void *bytes, int size) {
  if (size < 0 || (size > 0 && !bytes))
    fail("invalid param_bytes / param_size " + std::to_string(size));
  ParamsFile file;
  std::string error;
  if (size > 0 && !parseParams(static_cast<const uint8_t *>(bytes), static_cast<size_t>(size), file, error))
    fail("param_bytes: " + error);
  ArrayDict args, aux;
  for (const NDArrayRecord &record : file.arrays) {
    std::string_view name = record.name;
    bool isArg = name.substr(0, 4) == "arg:", isAux = name.substr(0, 4) == "aux:";
    if ((isArg || isAux) && !record.isNone)
      (isArg ? args : aux)[std::string(name.substr(4))] =
          NDArray::fromData(record.shape, record.dtype, record.data.data());
  }
  exec.copyParamsFrom(args, aux, /*allowExtraParams=*/true);
}

/// The dtypes MXPredCreateEx was given must be the compiled ones.
void checkDTypes(const Executor &exec, uint32_t count, const char **names, const int *codes) {
  for (uint32_t i = 0; i < count; ++i) {
    int index = argumentIndex(exec, names[i] ? names[i] : "");
    if (index < 0)
      continue;
    DType compiled = exec.manifest().arguments[index].dtype;
    if (codes[i] != static_cast<int>(compiled))
      fail(std::string("dtype ") + (isValidDType(codes[i]) ? dtypeName(static_cast<DType>(codes[i])) : "?") +
           " of '" + names[i] + "' differs from the compiled " + dtypeName(compiled) +
           "; compile the symbol with that input dtype (a __dtype__ attribute on the variable)");
  }
}

struct CreateArgs {
  const char *json;
  const void *paramBytes;
  int paramSize;
  int devType, devId;
  InputShapes inputs;
};

std::unique_ptr<Predictor> create(const CreateArgs &a, std::vector<std::string> outputKeys,
                                  const Executor *shareParamsWith = nullptr) {
  if (!a.json)
    fail("null symbol_json_str");
  if (a.devType != Context::kCPU)
    fail("symc's predict library runs cpu artifacts (dev_type 1), not dev_type " + std::to_string(a.devType));
  auto p = std::make_unique<Predictor>();
  p->json = a.json;
  p->outputKeys = std::move(outputKeys);
  p->inputNames = a.inputs.names;
  bindPredictor(*p, findArtifact(p->json, a.inputs, p->outputKeys), a.inputs, shareParamsWith);
  for (const std::string &name : p->inputNames)
    if (argumentIndex(*p->exec, name) < 0)
      fail("cannot find input key " + name);
  if (!shareParamsWith)
    copyParams(*p->exec, a.paramBytes, a.paramSize);
  return p;
}

const NDArray &outputOf(Predictor &p, uint32_t index) {
  if (index >= p.exec->outputs().size())
    fail("Output index out of range");
  return p.exec->outputs()[index];
}

struct NDList {
  std::vector<std::string> keys;
  std::vector<std::vector<float>> data;
  std::vector<std::vector<uint32_t>> shapes;
};

} // namespace

extern "C" {

const char *MXGetLastError() { return lastError.c_str(); }

int MXPredCreate(const char *json, const void *paramBytes, int paramSize, int devType, int devId,
                 uint32_t numInputs, const char **keys, const uint32_t *indptr, const uint32_t *data,
                 PredictorHandle *out) {
  return MXPredCreatePartialOut(json, paramBytes, paramSize, devType, devId, numInputs, keys, indptr, data, 0,
                                nullptr, out);
}

int MXPredCreateEx(const char *json, const void *paramBytes, int paramSize, int devType, int devId,
                   const uint32_t numInputs, const char **keys, const uint32_t *indptr, const uint32_t *data,
                   const uint32_t numDTypes, const char **dtypeNames, const int *dtypes, PredictorHandle *out) {
  return guarded([&] {
    auto p = create({json, paramBytes, paramSize, devType, devId, InputShapes(numInputs, keys, indptr, data)}, {});
    checkDTypes(*p->exec, numDTypes, dtypeNames, dtypes);
    *out = p.release();
  });
}

int MXPredCreatePartialOut(const char *json, const void *paramBytes, int paramSize, int devType, int devId,
                           uint32_t numInputs, const char **keys, const uint32_t *indptr, const uint32_t *data,
                           uint32_t numOutputs, const char **outputKeys, PredictorHandle *out) {
  return guarded([&] {
    std::vector<std::string> outputs;
    for (uint32_t i = 0; i < numOutputs; ++i)
      outputs.push_back(outputKeys[i] ? outputKeys[i] : "");
    *out = create({json, paramBytes, paramSize, devType, devId, InputShapes(numInputs, keys, indptr, data)},
                  outputs)
               .release();
  });
}

int MXPredCreateMultiThread(const char *json, const void *paramBytes, int paramSize, int devType, int devId,
                            uint32_t numInputs, const char **keys, const uint32_t *indptr, const uint32_t *data,
                            int numThreads, PredictorHandle *out) {
  return guarded([&] {
    if (numThreads < 1)
      fail("num_threads must be at least 1, got " + std::to_string(numThreads));
    CreateArgs args{json, paramBytes, paramSize, devType, devId, InputShapes(numInputs, keys, indptr, data)};
    std::vector<std::unique_ptr<Predictor>> predictors;
    predictors.push_back(create(args, {}));
    for (int i = 1; i < numThreads; ++i)
      predictors.push_back(create(args, {}, &*predictors.front()->exec));
    for (int i = 0; i < numThreads; ++i)
      out[i] = predictors[i].release();
  });
}

int MXPredReshape(uint32_t numInputs, const char **keys, const uint32_t *indptr, const uint32_t *data,
                  PredictorHandle handle, PredictorHandle *out) {
  return guarded([&] {
    Predictor &old = predictorOf(handle);
    InputShapes changed(numInputs, keys, indptr, data);
    // Inputs not named keep their shapes.
    InputShapes inputs(0, nullptr, nullptr, nullptr);
    for (const std::string &name : old.inputNames) {
      auto it = std::find(changed.names.begin(), changed.names.end(), name);
      inputs.names.push_back(name);
      inputs.dims.push_back(it != changed.names.end() ? changed.dims[it - changed.names.begin()]
                                                      : old.exec->argArrays()[argumentIndex(*old.exec, name)].shape());
    }
    for (const std::string &name : changed.names)
      if (std::find(old.inputNames.begin(), old.inputNames.end(), name) == old.inputNames.end())
        fail("cannot find input key " + name);
    auto p = std::make_unique<Predictor>();
    p->json = old.json;
    p->outputKeys = old.outputKeys;
    p->inputNames = old.inputNames;
    bindPredictor(*p, findArtifact(p->json, inputs, p->outputKeys, old.artifact), inputs, &*old.exec);
    *out = p.release();
  });
}

int MXPredGetOutputShape(PredictorHandle handle, uint32_t index, uint32_t **shapeData, uint32_t *shapeNdim) {
  return guarded([&] {
    Predictor &p = predictorOf(handle);
    if (index >= p.exec->outputs().size())
      fail("Index exceed number of outputs");
    const std::vector<int64_t> &shape = p.exec->outputs()[index].shape();
    p.shapeBuffer.assign(shape.begin(), shape.end());
    *shapeData = p.shapeBuffer.data();
    *shapeNdim = static_cast<uint32_t>(shape.size());
  });
}

int MXPredGetOutputType(PredictorHandle handle, uint32_t outIndex, int *outDType) {
  return guarded([&] { outDType[outIndex] = static_cast<int>(outputOf(predictorOf(handle), outIndex).dtype()); });
}

int MXPredSetInput(PredictorHandle handle, const char *key, const float *data, uint32_t size) {
  return guarded([&] {
    Predictor &p = predictorOf(handle);
    int index = key ? argumentIndex(*p.exec, key) : -1;
    if (index < 0)
      fail(std::string("cannot find input key ") + (key ? key : "(null)"));
    const NDArray &input = p.exec->argArrays()[index];
    if (size != input.size())
      fail("Memory size do not match");
    if (size && !data)
      fail("null input data");
    std::memcpy(input.data(), data, input.nbytes());
  });
}

int MXPredForward(PredictorHandle handle) {
  return guarded([&] { predictorOf(handle).exec->forward(false); });
}

int MXPredPartialForward(PredictorHandle handle, int step, int *stepLeft) {
  return guarded([&] { *stepLeft = predictorOf(handle).exec->partialForward(false, step); });
}

int MXPredSetMonitorCallback(PredictorHandle handle, PredMonitorCallback callback, void *callbackHandle,
                             bool monitorAll) {
  return guarded([&] {
    Executor::MonitorCallback call;
    if (callback)
      call = [callback, callbackHandle](const std::string &name, const NDArray &array) {
        SymcNDArrayHandle wrapped = nullptr;
        if (SymcNDArrayCreateFromData(array.data(), array.shape().data(), static_cast<int>(array.shape().size()),
                                      static_cast<int>(array.dtype()), nullptr, nullptr, &wrapped) != 0)
          throw Error("MXNetError", SymcGetLastError());
        callback(name.c_str(), wrapped, callbackHandle);
      };
    predictorOf(handle).exec->setMonitorCallback(std::move(call), monitorAll);
  });
}

int MXPredGetOutput(PredictorHandle handle, uint32_t index, float *data, uint32_t size) {
  return guarded([&] {
    const NDArray &output = outputOf(predictorOf(handle), index);
    if (size != output.size())
      fail("Memory size do not match");
    if (size && !data)
      fail("null output buffer");
    std::memcpy(data, output.data(), output.nbytes());
  });
}

int MXPredFree(PredictorHandle handle) { return guarded([&] { delete static_cast<Predictor *>(handle); }); }

int MXNDListCreate(const char *bytes, int size, NDListHandle *out, uint32_t *outLength) {
  return guarded([&] {
    if (size < 0 || (size > 0 && !bytes))
      fail("invalid nd_file_bytes / nd_file_size " + std::to_string(size));
    ParamsFile file;
    std::string error;
    if (!parseParams(reinterpret_cast<const uint8_t *>(bytes), static_cast<size_t>(size), file, error))
      fail("NDArray file: " + error);
    auto list = std::make_unique<NDList>();
    for (const NDArrayRecord &record : file.arrays) {
      NDArray values(record.shape, DType::Float32);
      if (!record.isNone)
        values.copyFrom(NDArray::fromData(record.shape, record.dtype, record.data.data()));
      list->keys.push_back(record.name);
      list->data.emplace_back(values.data<float>(), values.data<float>() + values.size());
      list->shapes.emplace_back(record.shape.begin(), record.shape.end());
    }
    *outLength = static_cast<uint32_t>(list->keys.size());
    *out = list.release();
  });
}

int MXNDListGet(NDListHandle handle, uint32_t index, const char **outKey, const float **outData,
                const uint32_t **outShape, uint32_t *outNdim) {
  return guarded([&] {
    if (!handle)
      fail("null NDListHandle");
    const NDList &list = *static_cast<NDList *>(handle);
    if (index >= list.keys.size())
      fail("Index out of range");
    *outKey = list.keys[index].c_str();
    *outData = list.data[index].data();
    *outShape = list.shapes[index].data();
    *outNdim = static_cast<uint32_t>(list.shapes[index].size());
  });
}

int MXNDListFree(NDListHandle handle) { return guarded([&] { delete static_cast<NDList *>(handle); }); }

} // extern "C"
