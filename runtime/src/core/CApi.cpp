//===- CApi.cpp - libsymrt's C API ----------------------------------------===//
#include "symc/c_api.h"
#include "CApiInternal.h"
#include "symc/ArtifactSeal.h"

#include "symc/Executor.h"
#include "symc/ExecutorGroup.h"
#include "symc/Version.h"

#include <algorithm>
#include <functional>

using symc::Artifact;
using symc::DType;
using symc::Error;
using symc::Executor;
using symc::NDArray;
using symc::TensorSpec;

struct SymcArtifact {
  std::shared_ptr<const Artifact> artifact;
};
struct SymcExecutor {
  /// Shared with the executor group it may belong to.
  std::shared_ptr<Executor> exec;
  /// The grad_req codes SymcExecutorGetGradReqs hands out.
  std::vector<int> gradReqCodes;
  /// The text SymcExecutorPrint hands out.
  std::string printed;
};
struct SymcNDArray {
  NDArray array;
};
struct SymcExecutorGroup {
  /// Shared with the executor manager it may belong to.
  std::shared_ptr<symc::DataParallelExecutorGroup> group;
};
struct SymcExecutorManager {
  symc::DataParallelExecutorManager manager;
};
struct SymcOptimizer {
  symc::SGD sgd;
};
/// Named arrays: a .params file's, or an executor group's shared buffer.
struct SymcNDList {
  std::vector<std::string> names;
  std::vector<NDArray> arrays;

  void add(std::string name, NDArray array) {
    names.push_back(std::move(name));
    arrays.push_back(std::move(array));
  }
  /// Replaces the array named `name`, or adds it.
  void set(const std::string &name, const NDArray &array) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end())
      add(name, array);
    else
      arrays[it - names.begin()] = array;
  }
  static std::unique_ptr<SymcNDList> of(const symc::ParamsFile &file) {
    auto list = std::make_unique<SymcNDList>();
    for (const symc::NDArrayRecord &r : file.arrays)
      list->add(r.name, r.isNone ? NDArray() : NDArray::fromData(r.shape, r.dtype, r.data.data()));
    return list;
  }
  symc::ArrayDict dict() const {
    symc::ArrayDict d;
    for (size_t i = 0; i < names.size(); ++i)
      d[names[i]] = arrays[i];
    return d;
  }
};

namespace {

thread_local std::string lastError, lastErrorKind;

template <typename F> int guarded(F &&body) {
  try {
    body();
    return 0;
  } catch (const Error &e) {
    lastError = e.what();
    lastErrorKind = e.kind();
  } catch (const std::bad_alloc &) {
    lastError = "out of memory";
    lastErrorKind = "MemoryError";
  } catch (const std::exception &e) {
    lastError = e.what();
    lastErrorKind = "MXNetError";
  } catch (...) { // nothing escapes into a C caller
    lastError = "unknown error";
    lastErrorKind = "MXNetError";
  }
  return -1;
}

[[noreturn]] void raise(const char *kind, const std::string &message) { throw Error(kind, message); }

template <typename T> T &deref(T *handle, const char *what) {
  if (!handle)
    raise("ValueError", std::string("null ") + what + " handle");
  return *handle;
}
/// A string argument, checked for null.
const char *text(const char *s, const char *what) {
  if (!s)
    raise("ValueError", std::string("null ") + what);
  return s;
}
const std::shared_ptr<const Artifact> &artifactOf(SymcArtifactHandle h) { return deref(h, "artifact").artifact; }
Executor &executorOf(SymcExecutorHandle h) { return *deref(h, "executor").exec; }
NDArray &arrayOf(SymcNDArrayHandle h) { return deref(h, "NDArray").array; }
symc::DataParallelExecutorGroup &groupOf(SymcExecutorGroupHandle h) { return *deref(h, "executor group").group; }
symc::SGD &optimizerOf(SymcOptimizerHandle h) { return deref(h, "optimizer").sgd; }

/// `count` names with a value each.
std::map<std::string, float> namedValues(int count, const char **names, const float *values) {
  if (count > 0 && (!names || !values))
    raise("ValueError", "null names or values for " + std::to_string(count) + " entries");
  std::map<std::string, float> map;
  for (int i = 0; i < count; ++i)
    map[text(names[i], "name")] = values[i];
  return map;
}

template <typename T> void setIf(T *out, T value) {
  if (out)
    *out = value;
}

SymcNDArrayHandle newHandle(const NDArray &array) {
  return array.isNone() ? nullptr : new SymcNDArray{array};
}

symc::Context context(int devType, int devId) {
  if (devType != symc::Context::kCPU && devType != symc::Context::kGPU)
    raise("ValueError", "unknown device type " + std::to_string(devType) + " (1 = cpu, 2 = gpu)");
  return {static_cast<symc::Context::DeviceType>(devType), devId};
}

symc::GroupContexts groupContexts(int count, const SymcGroupContext *groups) {
  if (count > 0 && !groups)
    raise("ValueError", "null group2ctx");
  symc::GroupContexts map;
  for (int i = 0; i < count; ++i)
    map[text(groups[i].group, "group name")] = context(groups[i].dev_type, groups[i].dev_id);
  return map;
}

std::vector<symc::Context> contextList(int count, const int *devTypes, const int *devIds) {
  if (count <= 0 || !devTypes || !devIds)
    raise("ValueError", "invalid contexts: " + std::to_string(count));
  std::vector<symc::Context> contexts;
  for (int i = 0; i < count; ++i)
    contexts.push_back(context(devTypes[i], devIds[i]));
  return contexts;
}

std::vector<std::string> names(int count, const char **list, const char *what) {
  if (count > 0 && !list)
    raise("ValueError", std::string("null ") + what + "s");
  std::vector<std::string> result;
  for (int i = 0; i < count; ++i)
    result.push_back(text(list[i], what));
  return result;
}

DType dtypeOf(int code) {
  if (!symc::isValidDType(code))
    raise("TypeError", "unknown dtype code " + std::to_string(code));
  return static_cast<DType>(code);
}

std::vector<int64_t> shapeOf(const int64_t *shape, int ndim) {
  if (ndim < 0 || (ndim > 0 && !shape))
    raise("ValueError", "invalid shape: " + std::to_string(ndim) + " dims");
  for (int i = 0; i < ndim; ++i)
    if (shape[i] < 0)
      raise("ValueError", "invalid shape: dim " + std::to_string(i) + " is " + std::to_string(shape[i]));
  return std::vector<int64_t>(shape, shape + ndim);
}

/// Named shapes, `ndim[i]` dims each, concatenated in `data`.
std::map<std::string, std::vector<int64_t>> shapeMap(int count, const char **names, const int64_t *data,
                                                     const int *ndim) {
  std::map<std::string, std::vector<int64_t>> shapes;
  for (int i = 0; i < count; ++i) {
    shapes[text(names[i], "name")] = shapeOf(data, ndim[i]);
    data += ndim[i];
  }
  return shapes;
}

/// `count` handles, none arrays where a handle is null.
std::vector<NDArray> arrays(int count, SymcNDArrayHandle *handles) {
  std::vector<NDArray> list(count > 0 ? count : 0);
  for (int i = 0; handles && i < count; ++i)
    if (handles[i])
      list[i] = handles[i]->array;
  return list;
}

symc::ArrayDict arrayDict(int count, const char **names, SymcNDArrayHandle *handles) {
  if (count > 0 && (!names || !handles))
    raise("ValueError", "null names or arrays for " + std::to_string(count) + " arrays");
  symc::ArrayDict dict;
  for (int i = 0; i < count; ++i)
    dict[text(names[i], "name")] = arrayOf(handles[i]);
  return dict;
}

std::string gradReqName(int code) {
  switch (code) {
  case SYMC_GRAD_NULL: return "null";
  case SYMC_GRAD_WRITE: return "write";
  case SYMC_GRAD_ADD: return "add";
  }
  raise("ValueError", "grad_req code " + std::to_string(code) + " is not one of 0 (null), 1 (write), 3 (add)");
}

/// simple_bind's three grad_req forms (see c_api.h).
symc::GradReqSpec gradReqSpec(int count, const char **names, const char **types) {
  if (count == 0)
    return std::string("write");
  if (names) {
    std::map<std::string, std::string> dict;
    for (int i = 0; i < count; ++i)
      dict[text(names[i], "name")] = text(types[i], "grad_req");
    return dict;
  }
  if (count == 1)
    return std::string(text(types[0], "grad_req"));
  std::vector<std::string> list;
  for (int i = 0; i < count; ++i)
    list.push_back(text(types[i], "grad_req"));
  return list;
}

const std::vector<TensorSpec> &specsOf(const symc::Manifest &m, SymcTensorList list) {
  static const std::vector<TensorSpec> none;
  switch (list) {
  case SYMC_ARGUMENTS: return m.arguments;
  case SYMC_AUX_STATES: return m.auxStates;
  case SYMC_OUTPUTS: return m.outputs;
  case SYMC_GRADIENTS: return m.backward ? m.backward->gradients : none;
  }
  raise("ValueError", "unknown tensor list " + std::to_string(static_cast<int>(list)));
}

void checkIndex(int index, size_t size, const char *what) {
  if (index < 0 || static_cast<size_t>(index) >= size)
    raise("IndexError", std::string(what) + " index " + std::to_string(index) + " out of range (" +
                            std::to_string(size) + ")");
}

/// An executor's bound arrays of a list; SYMC_GRADIENTS has one per argument.
const std::vector<NDArray> &boundArrays(const Executor &exec, SymcTensorList list) {
  switch (list) {
  case SYMC_ARGUMENTS: return exec.argArrays();
  case SYMC_AUX_STATES: return exec.auxArrays();
  case SYMC_OUTPUTS: return exec.outputs();
  case SYMC_GRADIENTS: return exec.gradArrays();
  }
  raise("ValueError", "unknown tensor list " + std::to_string(static_cast<int>(list)));
}

const std::vector<TensorSpec> &boundSpecs(const Executor &exec, SymcTensorList list) {
  return specsOf(exec.manifest(), list == SYMC_GRADIENTS ? SYMC_ARGUMENTS : list);
}

SymcExecutorHandle newExecutor(std::shared_ptr<Executor> exec) {
  std::vector<int> codes;
  for (symc::GradReq req : exec->gradReqs())
    codes.push_back(static_cast<int>(req));
  return new SymcExecutor{std::move(exec), std::move(codes), {}};
}

SymcExecutorHandle newExecutor(Executor exec) { return newExecutor(std::make_shared<Executor>(std::move(exec))); }

} // namespace

int symc::capi::runGuarded(const std::function<void()> &body) { return guarded(body); }

symc::DataParallelExecutorGroup &symc::capi::executorGroup(SymcExecutorGroupHandle group) { return groupOf(group); }

extern "C" {

const char *SymcGetLastError(void) { return lastError.c_str(); }
const char *SymcGetLastErrorKind(void) { return lastErrorKind.c_str(); }

int SymcGetVersion(const char **version, int *abiVersion) {
  return guarded([&] {
    setIf(version, static_cast<const char *>(SYMC_VERSION));
    setIf(abiVersion, static_cast<int>(SYMC_ARTIFACT_ABI_VERSION));
  });
}

int SymcRandomSeed(uint64_t seed) { return guarded([&] { symc::seedRandom(seed); }); }

int SymcArtifactLoad(const char *path, const char *prefix, SymcArtifactHandle *out) {
  return SymcArtifactLoadPinned(path, prefix, nullptr, out);
}

int SymcArtifactLoadPinned(const char *path, const char *prefix, const char *sha256, SymcArtifactHandle *out) {
  return guarded([&] {
    *out = new SymcArtifact{Artifact::load(text(path, "path"), prefix ? prefix : "symc", sha256 ? sha256 : "")};
  });
}

int SymcArtifactVerify(const char *path, const char **sha256) {
  static thread_local std::string digest;
  return guarded([&] {
    std::string error;
    if (!symc::verifyArtifactSeal(text(path, "path"), digest, error))
      raise("MXNetError", std::string(path) + ": " + error);
    *sha256 = digest.c_str();
  });
}

int SymcArtifactFree(SymcArtifactHandle artifact) { return guarded([&] { delete artifact; }); }

int SymcArtifactNumTensors(SymcArtifactHandle artifact, SymcTensorList list, int *count) {
  return guarded([&] { *count = static_cast<int>(specsOf(artifactOf(artifact)->manifest(), list).size()); });
}

int SymcArtifactGetTensor(SymcArtifactHandle artifact, SymcTensorList list, int index, const char **name,
                          int *ndim, const int64_t **shape, int *dtype) {
  return guarded([&] {
    const std::vector<TensorSpec> &specs = specsOf(artifactOf(artifact)->manifest(), list);
    checkIndex(index, specs.size(), "tensor");
    const TensorSpec &spec = specs[index];
    setIf(name, spec.name.c_str());
    setIf(ndim, static_cast<int>(spec.shape.size()));
    setIf(shape, spec.shape.data());
    setIf(dtype, static_cast<int>(spec.dtype));
  });
}

int SymcArtifactHasBackward(SymcArtifactHandle artifact, int *hasBackward) {
  return guarded([&] { *hasBackward = artifactOf(artifact)->manifest().backward.has_value(); });
}

int SymcArtifactNumShapeVariants(SymcArtifactHandle artifact, int *count) {
  return guarded([&] { *count = static_cast<int>(artifactOf(artifact)->shapeVariants().size()); });
}

int SymcArtifactGetShapeVariant(SymcArtifactHandle artifact, int index, SymcArtifactHandle *out) {
  return guarded([&] {
    const auto &variants = artifactOf(artifact)->shapeVariants();
    checkIndex(index, variants.size(), "shape variant");
    *out = new SymcArtifact{variants[index]};
  });
}

int SymcArtifactFits(SymcArtifactHandle artifact, int numShapes, const char **shapeNames, const int64_t *shapeData,
                     const int *shapeNdim, int *fits) {
  return guarded([&] {
    *fits = Artifact::forShapes(artifactOf(artifact), shapeMap(numShapes, shapeNames, shapeData, shapeNdim)) != nullptr;
  });
}

int SymcNDArrayCreate(const int64_t *shape, int ndim, int dtype, int devType, int devId, SymcNDArrayHandle *out) {
  return guarded([&] {
    *out = new SymcNDArray{NDArray(shapeOf(shape, ndim), dtypeOf(dtype), context(devType, devId))};
  });
}

int SymcNDArrayCreateFromData(void *data, const int64_t *shape, int ndim, int dtype,
                              void (*release)(void *, void *), void *releaseArg, SymcNDArrayHandle *out) {
  return guarded([&] {
    std::function<void(void *)> onRelease;
    if (release)
      onRelease = [release, releaseArg](void *p) { release(p, releaseArg); };
    *out = new SymcNDArray{NDArray::wrap(data, shapeOf(shape, ndim), dtypeOf(dtype), std::move(onRelease))};
  });
}

int SymcNDArrayFree(SymcNDArrayHandle array) { return guarded([&] { delete array; }); }

int SymcNDArrayGetShape(SymcNDArrayHandle array, int *ndim, const int64_t **shape) {
  return guarded([&] {
    const NDArray &a = arrayOf(array);
    *ndim = static_cast<int>(a.shape().size());
    *shape = a.shape().data();
  });
}

int SymcNDArrayGetDType(SymcNDArrayHandle array, int *dtype) {
  return guarded([&] { *dtype = static_cast<int>(arrayOf(array).dtype()); });
}

int SymcNDArrayGetData(SymcNDArrayHandle array, void **data) {
  return guarded([&] { *data = arrayOf(array).data(); });
}

/// A host array over `data` with `array`'s shape and dtype, after checking
/// `size` against it (MXNet's message).
static NDArray hostView(const NDArray &array, const void *data, size_t size) {
  if (size != array.size())
    raise("MXNetError", "Memory size do not match: array has " + std::to_string(array.size()) +
                            " elements, the buffer " + std::to_string(size));
  if (!data && size != 0)
    raise("ValueError", "null data");
  return NDArray::wrap(const_cast<void *>(data), array.shape(), array.dtype());
}

int SymcNDArraySyncCopyToCPU(SymcNDArrayHandle array, void *data, size_t size) {
  return guarded([&] { hostView(arrayOf(array), data, size).copyFrom(arrayOf(array)); });
}

int SymcNDArraySyncCopyFromCPU(SymcNDArrayHandle array, const void *data, size_t size) {
  return guarded([&] { arrayOf(array).copyFrom(hostView(arrayOf(array), data, size)); });
}

int SymcNDArrayGetContext(SymcNDArrayHandle array, int *devType, int *devId) {
  return guarded([&] {
    symc::Context ctx = arrayOf(array).context();
    setIf(devType, static_cast<int>(ctx.devType));
    setIf(devId, ctx.devId);
  });
}

int SymcNDArrayCopyFrom(SymcNDArrayHandle dst, SymcNDArrayHandle src) {
  return guarded([&] { arrayOf(dst).copyFrom(arrayOf(src)); });
}

int SymcNDListLoad(const char *path, SymcNDListHandle *out) {
  return guarded([&] {
    symc::ParamsFile file;
    std::string error;
    if (!symc::loadParams(text(path, "path"), file, error))
      raise("MXNetError", std::string(path) + ": " + error);
    *out = SymcNDList::of(file).release();
  });
}

int SymcNDListLoadFromBuffer(const void *bytes, size_t size, SymcNDListHandle *out) {
  return guarded([&] {
    symc::ParamsFile file;
    std::string error;
    if (!bytes && size)
      raise("ValueError", "null buffer of " + std::to_string(size) + " bytes");
    if (!symc::parseParams(static_cast<const uint8_t *>(bytes), size, file, error))
      raise("MXNetError", "NDArray list: " + error);
    *out = SymcNDList::of(file).release();
  });
}

int SymcNDListCreate(SymcNDListHandle *out) { return guarded([&] { *out = new SymcNDList(); }); }

int SymcNDListSet(SymcNDListHandle list, const char *name, SymcNDArrayHandle array) {
  return guarded([&] {
    deref(list, "NDList").set(text(name, "name"), arrayOf(array));
  });
}

int SymcNDListSize(SymcNDListHandle list, int *size) {
  return guarded([&] { *size = static_cast<int>(deref(list, "NDList").names.size()); });
}

int SymcNDListGet(SymcNDListHandle list, int index, const char **name, SymcNDArrayHandle *array) {
  return guarded([&] {
    SymcNDList &l = deref(list, "NDList");
    checkIndex(index, l.names.size(), "NDList");
    setIf(name, l.names[index].c_str());
    setIf(array, newHandle(l.arrays[index]));
  });
}

int SymcNDListFree(SymcNDListHandle list) { return guarded([&] { delete list; }); }

int SymcNDListSave(const char *path, int num, const char **names, SymcNDArrayHandle *arrays) {
  return guarded([&] {
    symc::ParamsFile file;
    file.named = names != nullptr;
    for (int i = 0; i < num; ++i)
      file.arrays.push_back(symc::toRecord(names ? text(names[i], "name") : "",
                                           arrays[i] ? arrays[i]->array : NDArray()));
    std::string error;
    if (!symc::saveParams(text(path, "path"), file, error))
      raise("MXNetError", std::string(path) + ": " + error);
  });
}

int SymcExecutorSimpleBind(SymcArtifactHandle artifact, int devType, int devId, int numShapes,
                           const char **shapeNames, const int64_t *shapeData, const int *shapeNdim,
                           int numGradReq, const char **gradReqNames, const char **gradReqTypes,
                           int numTypes, const char **typeNames, const int *typeCodes,
                           SymcExecutorHandle *out) {
  return SymcExecutorSimpleBindShared(artifact, devType, devId, numShapes, shapeNames, shapeData, shapeNdim,
                                      numGradReq, gradReqNames, gradReqTypes, numTypes, typeNames, typeCodes,
                                      nullptr, 0, nullptr, nullptr, 0, nullptr, out);
}

int SymcExecutorSimpleBindShared(SymcArtifactHandle artifact, int devType, int devId, int numShapes,
                                 const char **shapeNames, const int64_t *shapeData, const int *shapeNdim,
                                 int numGradReq, const char **gradReqNames, const char **gradReqTypes,
                                 int numTypes, const char **typeNames, const int *typeCodes,
                                 SymcExecutorHandle sharedExec, int numSharedArgNames,
                                 const char **sharedArgNames, SymcNDListHandle sharedBuffer, int numGroups,
                                 const SymcGroupContext *group2ctx, SymcExecutorHandle *out) {
  return guarded([&] {
    std::map<std::string, std::vector<int64_t>> shapes = shapeMap(numShapes, shapeNames, shapeData, shapeNdim);
    std::map<std::string, DType> types;
    for (int i = 0; i < numTypes; ++i)
      types[text(typeNames[i], "name")] = dtypeOf(typeCodes[i]);
    symc::SharedMemory shared;
    shared.exec = sharedExec ? &executorOf(sharedExec) : nullptr;
    for (int i = 0; i < numSharedArgNames; ++i)
      shared.argNames.push_back(text(sharedArgNames[i], "name"));
    symc::ArrayDict buffer = sharedBuffer ? sharedBuffer->dict() : symc::ArrayDict();
    shared.buffer = sharedBuffer ? &buffer : nullptr;
    *out = newExecutor(Executor::simpleBind(artifactOf(artifact), context(devType, devId), shapes,
                                            gradReqSpec(numGradReq, gradReqNames, gradReqTypes), types, shared,
                                            groupContexts(numGroups, group2ctx)));
    for (const auto &[name, array] : buffer) // the buffer gets what was allocated
      sharedBuffer->set(name, array);
  });
}

int SymcExecutorBind(SymcArtifactHandle artifact, int devType, int devId, int numArgs,
                     SymcNDArrayHandle *args, SymcNDArrayHandle *argGrads, const int *gradReq, int numAux,
                     SymcNDArrayHandle *aux, SymcExecutorHandle sharedExec, int numGroups,
                     const SymcGroupContext *group2ctx, SymcExecutorHandle *out) {
  return guarded([&] {
    std::vector<std::string> reqs;
    for (int i = 0; i < numArgs; ++i)
      reqs.push_back(gradReq ? gradReqName(gradReq[i]) : "write");
    std::optional<symc::Arrays> grads;
    if (argGrads)
      grads = arrays(numArgs, argGrads);
    *out = newExecutor(Executor::bind(artifactOf(artifact), context(devType, devId), arrays(numArgs, args),
                                      grads, reqs, symc::Arrays(arrays(numAux, aux)),
                                      sharedExec ? &executorOf(sharedExec) : nullptr, groupContexts(numGroups, group2ctx)));
  });
}

int SymcExecutorReshapeTo(SymcExecutorHandle exec, SymcArtifactHandle target, int partialShaping,
                          int allowUpSizing, int numShapes, const char **shapeNames, const int64_t *shapeData,
                          const int *shapeNdim, SymcExecutorHandle *out) {
  return guarded([&] {
    *out = newExecutor(executorOf(exec).reshape(partialShaping != 0, allowUpSizing != 0,
                                                shapeMap(numShapes, shapeNames, shapeData, shapeNdim),
                                                target ? artifactOf(target) : nullptr));
  });
}

int SymcExecutorReshape(SymcExecutorHandle exec, int partialShaping, int allowUpSizing, int numShapes,
                        const char **shapeNames, const int64_t *shapeData, const int *shapeNdim,
                        SymcExecutorHandle *out) {
  return SymcExecutorReshapeTo(exec, nullptr, partialShaping, allowUpSizing, numShapes, shapeNames, shapeData,
                               shapeNdim, out);
}

int SymcExecutorFree(SymcExecutorHandle exec) { return guarded([&] { delete exec; }); }

int SymcExecutorForward(SymcExecutorHandle exec, int isTrain) {
  return guarded([&] { executorOf(exec).forward(isTrain != 0); });
}

int SymcExecutorPartialForward(SymcExecutorHandle exec, int isTrain, int step, int *stepLeft) {
  return guarded([&] { deref(stepLeft, "step_left") = executorOf(exec).partialForward(isTrain != 0, step); });
}

int SymcExecutorBackward(SymcExecutorHandle exec, int numHeadGrads, SymcNDArrayHandle *headGrads, int isTrain) {
  return guarded([&] { executorOf(exec).backward(arrays(numHeadGrads, headGrads), isTrain != 0); });
}

int SymcExecutorNumTensors(SymcExecutorHandle exec, SymcTensorList list, int *count) {
  return guarded([&] { *count = static_cast<int>(boundArrays(executorOf(exec), list).size()); });
}

int SymcExecutorGetTensor(SymcExecutorHandle exec, SymcTensorList list, int index, const char **name,
                          SymcNDArrayHandle *array) {
  return guarded([&] {
    const Executor &e = executorOf(exec);
    const std::vector<NDArray> &bound = boundArrays(e, list);
    checkIndex(index, bound.size(), "tensor");
    setIf(name, boundSpecs(e, list)[index].name.c_str());
    setIf(array, newHandle(bound[index]));
  });
}

int SymcExecutorGetArray(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out) {
  return guarded([&] {
    for (const auto &map : {executorOf(exec).argMap(), executorOf(exec).auxMap()})
      if (auto it = map.find(text(name, "name")); it != map.end()) {
        *out = newHandle(it->second);
        return;
      }
    raise("KeyError", std::string("'") + name + "'");
  });
}

int SymcExecutorGetGrad(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out) {
  return guarded([&] {
    symc::ArrayDict grads = executorOf(exec).gradMap();
    auto it = grads.find(text(name, "name"));
    if (it == grads.end())
      raise("KeyError", std::string("'") + name + "'");
    *out = newHandle(it->second);
  });
}

int SymcExecutorNumOutputs(SymcExecutorHandle exec, int *count) {
  return SymcExecutorNumTensors(exec, SYMC_OUTPUTS, count);
}

int SymcExecutorGetOutput(SymcExecutorHandle exec, int index, SymcNDArrayHandle *out) {
  return SymcExecutorGetTensor(exec, SYMC_OUTPUTS, index, nullptr, out);
}

int SymcExecutorGetGradReqs(SymcExecutorHandle exec, const int **gradReq) {
  return guarded([&] { *gradReq = deref(exec, "executor").gradReqCodes.data(); });
}

int SymcExecutorCopyParamsFrom(SymcExecutorHandle exec, int numArgs, const char **argNames,
                               SymcNDArrayHandle *argArrays, int numAux, const char **auxNames,
                               SymcNDArrayHandle *auxArrays, int allowExtraParams) {
  return guarded([&] {
    std::optional<symc::ArrayDict> aux;
    if (auxNames)
      aux = arrayDict(numAux, auxNames, auxArrays);
    executorOf(exec).copyParamsFrom(arrayDict(numArgs, argNames, argArrays), aux, allowExtraParams != 0);
  });
}

int SymcExecutorLoadParams(SymcExecutorHandle exec, const char *path, int allowExtraParams) {
  return guarded([&] {
    symc::ParamsFile file;
    std::string error;
    if (!symc::loadParams(text(path, "path"), file, error))
      raise("MXNetError", std::string(path) + ": " + error);
    symc::ParamArrays params = symc::splitParams(file);
    executorOf(exec).copyParamsFrom(params.args, params.aux, allowExtraParams != 0);
  });
}

int SymcExecutorSetNumThreads(SymcExecutorHandle exec, int threads) {
  return guarded([&] { executorOf(exec).setNumThreads(threads); });
}

int SymcExecutorSetMonitorCallback(SymcExecutorHandle exec, SymcMonitorCallback callback, void *user,
                                   int monitorAll) {
  return guarded([&] {
    Executor::MonitorCallback call;
    if (callback)
      call = [callback, user](const std::string &name, const NDArray &array) {
        callback(name.c_str(), new SymcNDArray{array}, user);
      };
    executorOf(exec).setMonitorCallback(std::move(call), monitorAll != 0);
  });
}

int SymcExecutorPrint(SymcExecutorHandle exec, const char **out) {
  return guarded([&] {
    SymcExecutor &e = deref(exec, "executor");
    e.printed = e.exec->debugStr();
    *out = e.printed.c_str();
  });
}

int SymcExecutorGetOptimizedSymbol(SymcExecutorHandle exec, const char **json) {
  return guarded([&] {
    const std::string &symbol = executorOf(exec).optimizedSymbol();
    if (symbol.empty())
      raise("MXNetError", "this artifact predates symc 0.2 and carries no symbol; recompile it");
    *json = symbol.c_str();
  });
}

int SymcSplitInputSlice(int64_t batchSize, int numDevices, const double *workLoad, int64_t *slices) {
  return guarded([&] {
    if (numDevices <= 0 || !workLoad || !slices)
      raise("ValueError", "invalid work load: " + std::to_string(numDevices) + " devices");
    for (const symc::BatchSlice &slice :
         symc::splitInputSlice(batchSize, std::vector<double>(workLoad, workLoad + numDevices))) {
      *slices++ = slice.begin;
      *slices++ = slice.end;
    }
  });
}

int SymcExecutorGroupCreate(SymcArtifactHandle artifact, int numContexts, const int *devTypes, const int *devIds,
                            const double *workLoad, int numInputs, const char **inputNames, const int64_t *shapeData,
                            const int *shapeNdim, int numParams, const char **paramNames,
                            SymcExecutorGroupHandle shared, SymcExecutorGroupHandle *out) {
  return guarded([&] {
    if (!workLoad)
      raise("ValueError", "null work load");
    std::vector<symc::Context> contexts = contextList(numContexts, devTypes, devIds);
    std::vector<std::string> params = names(numParams, paramNames, "param name");
    *out = new SymcExecutorGroup{std::make_shared<symc::DataParallelExecutorGroup>(
        artifactOf(artifact), contexts, std::vector<double>(workLoad, workLoad + numContexts),
        shapeMap(numInputs, inputNames, shapeData, shapeNdim), params, shared ? &groupOf(shared) : nullptr)};
  });
}

int SymcExecutorGroupFree(SymcExecutorGroupHandle group) { return guarded([&] { delete group; }); }

int SymcExecutorGroupNumExecutors(SymcExecutorGroupHandle group, int *count) {
  return guarded([&] { *count = static_cast<int>(groupOf(group).executors().size()); });
}

int SymcExecutorGroupGetExecutor(SymcExecutorGroupHandle group, int index, SymcExecutorHandle *out) {
  return guarded([&] {
    const auto &execs = groupOf(group).executors();
    checkIndex(index, execs.size(), "executor");
    *out = newExecutor(execs[index]);
  });
}

int SymcExecutorManagerCreate(SymcArtifactHandle artifact, int numContexts, const int *devTypes, const int *devIds,
                              const double *workLoad, int numInputs, const char **inputNames,
                              const int64_t *shapeData, const int *shapeNdim, int numParams, const char **paramNames,
                              SymcBucketArtifact symGen, void *user, const char *defaultBucketKey,
                              SymcExecutorManagerHandle *out) {
  return guarded([&] {
    std::vector<symc::Context> contexts = contextList(numContexts, devTypes, devIds);
    symc::DataParallelExecutorManager::BucketArtifacts buckets;
    if (symGen)
      buckets = [symGen, user](const std::string &key) {
        SymcArtifactHandle handle = symGen(key.c_str(), user);
        if (!handle)
          raise("MXNetError", "sym_gen gave no artifact for bucket '" + key + "'");
        return artifactOf(handle);
      };
    *out = new SymcExecutorManager{symc::DataParallelExecutorManager(
        artifactOf(artifact), contexts,
        shapeMap(numInputs, inputNames, shapeData, shapeNdim), names(numParams, paramNames, "param name"),
        workLoad ? std::vector<double>(workLoad, workLoad + numContexts) : std::vector<double>(), buckets,
        defaultBucketKey ? defaultBucketKey : "")};
  });
}

int SymcExecutorManagerFree(SymcExecutorManagerHandle manager) { return guarded([&] { delete manager; }); }

int SymcExecutorManagerLoadDataBatch(SymcExecutorManagerHandle manager, const char *bucketKey, int num,
                                     const char **arrayNames, SymcNDArrayHandle *arrays, int numShapes,
                                     const char **shapeNames, const int64_t *shapeData, const int *shapeNdim) {
  return guarded([&] {
    deref(manager, "executor manager")
        .manager.loadDataBatch(arrayDict(num, arrayNames, arrays), bucketKey ? bucketKey : "",
                               shapeMap(numShapes, shapeNames, shapeData, shapeNdim));
  });
}

int SymcExecutorManagerGetCurrentGroup(SymcExecutorManagerHandle manager, SymcExecutorGroupHandle *out) {
  return guarded([&] { *out = new SymcExecutorGroup{deref(manager, "executor manager").manager.currentGroup()}; });
}

int SymcExecutorGroupGetSlice(SymcExecutorGroupHandle group, int index, int64_t *begin, int64_t *end) {
  return guarded([&] {
    const auto &slices = groupOf(group).slices();
    checkIndex(index, slices.size(), "executor");
    setIf(begin, slices[index].begin);
    setIf(end, slices[index].end);
  });
}

int SymcExecutorGroupLoadDataBatch(SymcExecutorGroupHandle group, int num, const char **names,
                                   SymcNDArrayHandle *arrays) {
  return guarded([&] { groupOf(group).loadDataBatch(arrayDict(num, names, arrays)); });
}

int SymcExecutorGroupForward(SymcExecutorGroupHandle group, int isTrain) {
  return guarded([&] { groupOf(group).forward(isTrain != 0); });
}

int SymcExecutorGroupBackward(SymcExecutorGroupHandle group) {
  return guarded([&] { groupOf(group).backward(); });
}

int SymcExecutorGroupSetNumThreads(SymcExecutorGroupHandle group, int threads) {
  return guarded([&] { groupOf(group).setNumThreads(threads); });
}

int SymcExecutorGroupAggregateGradients(SymcExecutorGroupHandle group) {
  return guarded([&] { groupOf(group).aggregateGradients(); });
}

int SymcExecutorGroupAggregateGradientsEx(SymcExecutorGroupHandle group, const char *kvstore) {
  return guarded([&] { groupOf(group).aggregateGradients(symc::parseKVStoreType(text(kvstore, "kvstore"))); });
}

int SymcExecutorGroupSetParams(SymcExecutorGroupHandle group, int numArgs, const char **argNames,
                               SymcNDArrayHandle *argArrays, int numAux, const char **auxNames,
                               SymcNDArrayHandle *auxArrays, int allowExtraParams) {
  return guarded([&] {
    groupOf(group).setParams(arrayDict(numArgs, argNames, argArrays), arrayDict(numAux, auxNames, auxArrays),
                             allowExtraParams != 0);
  });
}

int SymcExecutorGroupCopyTo(SymcExecutorGroupHandle group, SymcNDListHandle args, SymcNDListHandle aux) {
  return guarded([&] {
    symc::ArrayDict argValues, auxValues;
    groupOf(group).copyTo(argValues, auxValues);
    for (auto [values, list] : {std::pair{&argValues, args}, std::pair{&auxValues, aux}})
      for (const auto &[name, array] : *values)
        deref(list, "NDList").set(name, array);
  });
}

int SymcExecutorGroupUpdate(SymcExecutorGroupHandle group, SymcOptimizerHandle optimizer) {
  return guarded([&] { groupOf(group).update(optimizerOf(optimizer)); });
}

int SymcOptimizerCreateSGD(float learningRate, float momentum, float wd, float rescaleGrad, float clipGradient,
                           SymcOptimizerHandle *out) {
  return guarded([&] {
    *out = new SymcOptimizer{symc::SGD(symc::SGDOptions{learningRate, momentum, wd, rescaleGrad, clipGradient})};
  });
}

int SymcOptimizerFree(SymcOptimizerHandle optimizer) { return guarded([&] { delete optimizer; }); }

int SymcOptimizerSetMultipliers(SymcOptimizerHandle optimizer, const char *symbolJson, int numParams,
                                const char **paramNames, int numLr, const char **lrNames, const float *lrMult,
                                int numWd, const char **wdNames, const float *wdMult) {
  return guarded([&] {
    optimizerOf(optimizer).setMultipliers(symbolJson ? symbolJson : "", names(numParams, paramNames, "param name"),
                                          namedValues(numLr, lrNames, lrMult), namedValues(numWd, wdNames, wdMult));
  });
}

int SymcOptimizerSetLearningRate(SymcOptimizerHandle optimizer, float learningRate) {
  return guarded([&] { optimizerOf(optimizer).setLearningRate(learningRate); });
}

int SymcOptimizerUpdate(SymcOptimizerHandle optimizer, int index, const char *name, SymcNDArrayHandle weight,
                        SymcNDArrayHandle grad) {
  return guarded([&] { optimizerOf(optimizer).update(index, text(name, "name"), arrayOf(weight), arrayOf(grad)); });
}

} // extern "C"
