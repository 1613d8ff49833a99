//===- CApi.cpp - libsymrt's C API ----------------------------------------===//
#include "symc/c_api.h"

#include "symc/Executor.h"

namespace {

thread_local std::string lastError, lastErrorKind;

using symc::Artifact;
using symc::Executor;
using symc::NDArray;

template <typename F> int guarded(F &&body) {
  try {
    body();
    return 0;
  } catch (const symc::Error &e) {
    lastError = e.what();
    lastErrorKind = e.kind();
  } catch (const std::exception &e) {
    lastError = e.what();
    lastErrorKind = "MXNetError";
  }
  return -1;
}

symc::Context context(int devType, int devId) {
  return {static_cast<symc::Context::DeviceType>(devType), devId};
}

std::shared_ptr<const Artifact> &artifactOf(SymcArtifactHandle h) {
  return *static_cast<std::shared_ptr<const Artifact> *>(h);
}
Executor &executorOf(SymcExecutorHandle h) { return *static_cast<Executor *>(h); }
NDArray &arrayOf(SymcNDArrayHandle h) { return *static_cast<NDArray *>(h); }

std::vector<NDArray> arrays(int n, SymcNDArrayHandle *handles) {
  std::vector<NDArray> list;
  for (int i = 0; i < n; ++i)
    list.push_back(handles[i] ? arrayOf(handles[i]) : NDArray());
  return list;
}

} // namespace

extern "C" {

const char *symcGetLastError(void) { return lastError.c_str(); }
const char *symcGetLastErrorKind(void) { return lastErrorKind.c_str(); }

int SymcArtifactLoad(const char *path, const char *prefix, SymcArtifactHandle *out) {
  return guarded([&] {
    *out = new std::shared_ptr<const Artifact>(Artifact::load(path, prefix ? prefix : "symc"));
  });
}

int SymcArtifactFree(SymcArtifactHandle artifact) {
  return guarded([&] { delete &artifactOf(artifact); });
}

int SymcNDArrayCreate(const int64_t *shape, int ndim, int dtype, SymcNDArrayHandle *out) {
  return guarded([&] {
    if (!symc::isValidDType(dtype))
      throw symc::Error("MXNetError", "unknown dtype code " + std::to_string(dtype));
    *out = new NDArray(std::vector<int64_t>(shape, shape + ndim), static_cast<symc::DType>(dtype));
  });
}

int SymcNDArrayFree(SymcNDArrayHandle array) { return guarded([&] { delete &arrayOf(array); }); }

int SymcNDArrayGetShape(SymcNDArrayHandle array, int *ndim, const int64_t **shape) {
  return guarded([&] {
    *ndim = static_cast<int>(arrayOf(array).shape().size());
    *shape = arrayOf(array).shape().data();
  });
}

int SymcNDArrayGetDType(SymcNDArrayHandle array, int *dtype) {
  return guarded([&] { *dtype = static_cast<int>(arrayOf(array).dtype()); });
}

int SymcNDArrayGetData(SymcNDArrayHandle array, void **data) {
  return guarded([&] { *data = arrayOf(array).data(); });
}

int SymcExecutorSimpleBind(SymcArtifactHandle artifact, int devType, int devId, int numShapes,
                           const char **names, const int64_t *shapeData, const int *shapeNdim,
                           const char *gradReq, SymcExecutorHandle *out) {
  return guarded([&] {
    std::map<std::string, std::vector<int64_t>> shapes;
    for (int i = 0; i < numShapes; ++i) {
      shapes[names[i]] = std::vector<int64_t>(shapeData, shapeData + shapeNdim[i]);
      shapeData += shapeNdim[i];
    }
    *out = new Executor(Executor::simpleBind(artifactOf(artifact), context(devType, devId), shapes,
                                             std::string(gradReq ? gradReq : "write")));
  });
}

int SymcExecutorBind(SymcArtifactHandle artifact, int devType, int devId, int numArgs,
                     SymcNDArrayHandle *args, int numAux, SymcNDArrayHandle *aux,
                     const char *gradReq, SymcExecutorHandle *out) {
  return guarded([&] {
    *out = new Executor(Executor::bind(artifactOf(artifact), context(devType, devId),
                                       arrays(numArgs, args), std::nullopt,
                                       std::string(gradReq ? gradReq : "write"),
                                       symc::Arrays(arrays(numAux, aux))));
  });
}

int SymcExecutorForward(SymcExecutorHandle exec, int isTrain) {
  return guarded([&] { executorOf(exec).forward(isTrain != 0); });
}

int SymcExecutorBackward(SymcExecutorHandle exec, int numHeadGrads, SymcNDArrayHandle *headGrads) {
  return guarded([&] {
    std::vector<NDArray> heads(numHeadGrads);
    for (int i = 0; i < numHeadGrads; ++i)
      if (headGrads[i])
        heads[i] = arrayOf(headGrads[i]);
    executorOf(exec).backward(heads);
  });
}

int SymcExecutorNumOutputs(SymcExecutorHandle exec, int *count) {
  return guarded([&] { *count = static_cast<int>(executorOf(exec).outputs().size()); });
}

int SymcExecutorGetOutput(SymcExecutorHandle exec, int index, SymcNDArrayHandle *out) {
  return guarded([&] {
    const auto &outputs = executorOf(exec).outputs();
    if (index < 0 || index >= static_cast<int>(outputs.size()))
      throw symc::Error("IndexError", "output index " + std::to_string(index) + " out of range");
    *out = new NDArray(outputs[index]);
  });
}

int SymcExecutorGetArray(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out) {
  return guarded([&] {
    for (const auto &map : {executorOf(exec).argMap(), executorOf(exec).auxMap()})
      if (auto it = map.find(name); it != map.end()) {
        *out = new NDArray(it->second);
        return;
      }
    throw symc::Error("KeyError", std::string("'") + name + "'");
  });
}

int SymcExecutorGetGrad(SymcExecutorHandle exec, const char *name, SymcNDArrayHandle *out) {
  return guarded([&] {
    symc::ArrayDict grads = executorOf(exec).gradMap();
    auto it = grads.find(name);
    if (it == grads.end())
      throw symc::Error("KeyError", std::string("'") + name + "'");
    *out = it->second.isNone() ? nullptr : new NDArray(it->second);
  });
}

int SymcExecutorSetNumThreads(SymcExecutorHandle exec, int threads) {
  return guarded([&] { executorOf(exec).setNumThreads(threads); });
}

int SymcExecutorFree(SymcExecutorHandle exec) { return guarded([&] { delete &executorOf(exec); }); }

int SymcRandomSeed(uint64_t seed) { return guarded([&] { symc::seedRandom(seed); }); }

} // extern "C"
