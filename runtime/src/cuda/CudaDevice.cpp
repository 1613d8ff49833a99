//===- CudaDevice.cpp - libsymrt_cuda: GPU arrays and kernel launches -----===//
//
// Two faces on the CUDA driver API:
// - the device table libsymrt loads (DeviceAPI.h): memory, copies, streams
//   and runs, on each device's primary context (the one CUDA's runtime and
//   PyTorch share);
// - the launch functions generated host code calls (MLIR's gpu-to-llvm
//   names them mgpu*), which run on the calling thread's current run: the
//   module is loaded once per context and kept (MLIR 19's host code asks
//   for it at every launch), and launches go to the executor's stream
//   without a synchronization each.
//
//===----------------------------------------------------------------------===//
#include "core/DeviceAPI.h"

#include "symc/ArtifactABI.h"

#include <cublas_v2.h>
#include <cuda.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

thread_local std::string lastErrorText;

int fail(std::string message) {
  lastErrorText = std::move(message);
  return 1;
}

std::string describe(CUresult result) {
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(result, &name);
  cuGetErrorString(result, &text);
  return std::string(name ? name : "CUDA error " + std::to_string(result)) + (text ? std::string(": ") + text : "");
}

/// 0, or fails with `what` and the driver's reason.
int check(CUresult result, const char *what) {
  return result == CUDA_SUCCESS ? 0 : fail(std::string(what) + " failed: " + describe(result));
}

/// Each device's primary context, retained on first use.
class Contexts {
public:
  int current(int device, CUcontext *out) {
    if (int status = init())
      return status;
    std::lock_guard<std::mutex> lock(mutex);
    auto found = contexts.find(device);
    if (found == contexts.end()) {
      int count = 0;
      if (int status = check(cuDeviceGetCount(&count), "cuDeviceGetCount"))
        return status;
      if (device < 0 || device >= count)
        return fail("gpu(" + std::to_string(device) + ") does not exist: this machine has " + std::to_string(count) +
                    " GPU" + (count == 1 ? "" : "s"));
      CUdevice handle;
      CUcontext context;
      if (int status = check(cuDeviceGet(&handle, device), "cuDeviceGet"))
        return status;
      if (int status = check(cuDevicePrimaryCtxRetain(&context, handle), "cuDevicePrimaryCtxRetain"))
        return status;
      found = contexts.emplace(device, context).first;
    }
    *out = found->second;
    return check(cuCtxSetCurrent(found->second), "cuCtxSetCurrent");
  }

  int count(int *out) {
    if (int status = init())
      return status;
    return check(cuDeviceGetCount(out), "cuDeviceGetCount");
  }

private:
  int init() {
    std::lock_guard<std::mutex> lock(mutex);
    if (initialized)
      return 0;
    if (int status = check(cuInit(0), "cuInit (is an NVIDIA driver installed and a GPU visible?)"))
      return status;
    initialized = true;
    return 0;
  }

  std::mutex mutex;
  bool initialized = false;
  std::map<int, CUcontext> contexts;
};

Contexts &contexts() {
  static Contexts instance;
  return instance;
}

/// Makes `device` current on this thread.
int use(int device) {
  CUcontext context;
  return contexts().current(device, &context);
}

/// The run the calling thread is in (beginRun .. endRun): where its
/// launches go, and the first launch failure.
struct Run {
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string error;
};
thread_local std::optional<Run> currentRun;

void recordRunError(std::string message) {
  if (currentRun && currentRun->error.empty())
    currentRun->error = std::move(message);
}

/// Modules loaded from the artifacts' embedded PTX, by context and image
/// address, and their kernels by name.
class Modules {
public:
  CUmodule load(CUcontext context, const void *image) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = modules.find({context, image});
    if (found != modules.end())
      return found->second;
    char log[8192] = {0};
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void *values[] = {log, reinterpret_cast<void *>(static_cast<uintptr_t>(sizeof(log)))};
    CUmodule module = nullptr;
    CUresult result = cuModuleLoadDataEx(&module, image, 2, options, values);
    if (result != CUDA_SUCCESS) {
      recordRunError("loading the artifact's PTX failed: " + describe(result) + (log[0] ? std::string(": ") + log : ""));
      return nullptr;
    }
    modules.emplace(std::make_pair(context, image), module);
    return module;
  }

  CUfunction function(CUmodule module, const char *name) {
    std::lock_guard<std::mutex> lock(mutex);
    auto found = functions.find({module, name});
    if (found != functions.end())
      return found->second;
    CUfunction function = nullptr;
    CUresult result = cuModuleGetFunction(&function, module, name);
    if (result != CUDA_SUCCESS) {
      recordRunError(std::string("kernel '") + name + "' is not in the artifact's PTX: " + describe(result));
      return nullptr;
    }
    functions.emplace(std::make_pair(module, std::string(name)), function);
    return function;
  }

private:
  std::mutex mutex;
  std::map<std::pair<CUcontext, const void *>, CUmodule> modules;
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
};

Modules &modules() {
  static Modules instance;
  return instance;
}

/// This thread's cuBLAS handle for `context` (a handle is for one thread
/// at a time: each sets its own stream).
cublasHandle_t cublasFor(CUcontext context) {
  thread_local std::map<CUcontext, cublasHandle_t> handles;
  auto found = handles.find(context);
  if (found != handles.end())
    return found->second;
  cublasHandle_t handle = nullptr;
  cublasStatus_t status = cublasCreate(&handle);
  if (status != CUBLAS_STATUS_SUCCESS) {
    recordRunError(std::string("cublasCreate failed: ") + cublasGetStatusString(status));
    return nullptr;
  }
  return handles.emplace(context, handle).first->second;
}

int deviceCount(int *count) { return contexts().count(count); }

int allocate(int device, size_t bytes, void **out) {
  if (int status = use(device))
    return status;
  CUdeviceptr pointer = 0;
  if (bytes == 0) {
    *out = nullptr;
    return 0;
  }
  CUresult result = cuMemAlloc(&pointer, bytes);
  if (result != CUDA_SUCCESS)
    return fail("allocating " + std::to_string(bytes) + " bytes on gpu(" + std::to_string(device) +
                ") failed: " + describe(result));
  *out = reinterpret_cast<void *>(pointer);
  return 0;
}

int release(int device, void *pointer) {
  if (!pointer)
    return 0;
  if (int status = use(device))
    return status;
  return check(cuMemFree(reinterpret_cast<CUdeviceptr>(pointer)), "cuMemFree");
}

int copyToDevice(int device, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return 0;
  if (int status = use(device))
    return status;
  return check(cuMemcpyHtoD(reinterpret_cast<CUdeviceptr>(dst), src, bytes), "copying to the GPU (cuMemcpyHtoD)");
}

int copyToHost(int device, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return 0;
  if (int status = use(device))
    return status;
  return check(cuMemcpyDtoH(dst, reinterpret_cast<CUdeviceptr>(src), bytes), "copying from the GPU (cuMemcpyDtoH)");
}

int copyOnDevice(int device, void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return 0;
  if (int status = use(device))
    return status;
  return check(cuMemcpyDtoD(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), bytes),
               "cuMemcpyDtoD");
}

int fillZero(int device, void *dst, size_t bytes) {
  if (bytes == 0)
    return 0;
  if (int status = use(device))
    return status;
  // The legacy default stream: ordered after every executor stream's work.
  return check(cuMemsetD8(reinterpret_cast<CUdeviceptr>(dst), 0, bytes), "cuMemsetD8");
}

int createStream(int device, void **stream) {
  if (int status = use(device))
    return status;
  CUstream created = nullptr;
  // A blocking stream: synchronous copies (the legacy default stream) wait
  // for its kernels, and its kernels for them.
  if (int status = check(cuStreamCreate(&created, CU_STREAM_DEFAULT), "cuStreamCreate"))
    return status;
  *stream = created;
  return 0;
}

int destroyStream(int device, void *stream) {
  if (int status = use(device))
    return status;
  return check(cuStreamDestroy(static_cast<CUstream>(stream)), "cuStreamDestroy");
}

int beginRun(int device, void *stream) {
  if (currentRun)
    return fail("a run is already in progress on this thread");
  CUcontext context;
  if (int status = contexts().current(device, &context))
    return status;
  currentRun = Run{context, static_cast<CUstream>(stream), ""};
  return 0;
}

int endRun(int /*device: the stream knows its context*/, void *stream) {
  if (!currentRun)
    return fail("no run in progress on this thread");
  std::string error = std::move(currentRun->error);
  currentRun.reset();
  CUresult waited = cuStreamSynchronize(static_cast<CUstream>(stream));
  if (!error.empty())
    return fail(error);
  return check(waited, "running the kernels");
}

const char *lastError() { return lastErrorText.c_str(); }

const SymcDeviceAPI api = {SYMC_DEVICE_API_VERSION,
                           deviceCount,
                           allocate,
                           release,
                           copyToDevice,
                           copyToHost,
                           copyOnDevice,
                           fillZero,
                           createStream,
                           destroyStream,
                           beginRun,
                           endRun,
                           lastError};

} // namespace

extern "C" {

__attribute__((visibility("default"))) const SymcDeviceAPI *symcCudaDeviceAPI(void) { return &api; }

// The launch functions of MLIR's gpu-to-llvm host code.

__attribute__((visibility("default"))) CUmodule mgpuModuleLoad(void *data, size_t) {
  if (!currentRun) {
    lastErrorText = "a kernel was launched outside a run";
    return nullptr;
  }
  return modules().load(currentRun->context, data);
}

__attribute__((visibility("default"))) CUmodule mgpuModuleLoadJIT(void *data, int) {
  return mgpuModuleLoad(data, 0);
}

/// Modules stay loaded for the process: the generated code unloads after
/// every launch.
__attribute__((visibility("default"))) void mgpuModuleUnload(CUmodule) {}

__attribute__((visibility("default"))) CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  return module ? modules().function(module, name) : nullptr;
}

__attribute__((visibility("default"))) CUstream mgpuStreamCreate() {
  return currentRun ? currentRun->stream : nullptr;
}

/// The run's stream is waited for once, at its end.
__attribute__((visibility("default"))) void mgpuStreamSynchronize(CUstream) {}

__attribute__((visibility("default"))) void mgpuStreamDestroy(CUstream) {}

/// A row-major matrix (or stack of them) of a GEMM.
struct GemmOperand {
  const float *data;
  int64_t rows, columns, leading, batch, batchStride;
};

GemmOperand gemmOperand(int64_t rank, const SymcMemRefF32 *m) {
  const int64_t *sizes = m->sizes_and_strides, *strides = m->sizes_and_strides + rank;
  return {m->aligned + m->offset, sizes[rank - 2], sizes[rank - 1], strides[rank - 2], rank == 3 ? sizes[0] : 1,
          rank == 3 ? strides[0] : 0};
}

/// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies the
/// operands the other way round, each in its own layout.
__attribute__((visibility("default"))) void symcCudaGemm(int64_t rankA, const SymcMemRefF32 *aRef, int64_t rankB,
                                                          const SymcMemRefF32 *bRef, int64_t rankC,
                                                          const SymcMemRefF32 *cRef) {
  if (!currentRun) {
    lastErrorText = "a GEMM was called outside a run";
    return;
  }
  GemmOperand a = gemmOperand(rankA, aRef), b = gemmOperand(rankB, bRef), c = gemmOperand(rankC, cRef);
  if (!currentRun->error.empty() || c.batch == 0 || c.rows == 0 || c.columns == 0)
    return;
  cublasHandle_t handle = cublasFor(currentRun->context);
  if (!handle)
    return;
  const float one = 1.0f;
  cublasStatus_t status = cublasSetStream(handle, currentRun->stream);
  if (status == CUBLAS_STATUS_SUCCESS)
    status = cublasSgemmStridedBatched(handle, CUBLAS_OP_N, CUBLAS_OP_N, static_cast<int>(c.columns),
                                       static_cast<int>(c.rows), static_cast<int>(a.columns), &one, b.data,
                                       static_cast<int>(b.leading), b.batchStride, a.data, static_cast<int>(a.leading),
                                       a.batchStride, &one, const_cast<float *>(c.data), static_cast<int>(c.leading),
                                       c.batchStride, static_cast<int>(c.batch));
  if (status != CUBLAS_STATUS_SUCCESS)
    recordRunError("a GEMM (" + std::to_string(c.rows) + "x" + std::to_string(a.columns) + " by " +
                   std::to_string(a.columns) + "x" + std::to_string(c.columns) + ") failed in cuBLAS: " +
                   cublasGetStatusString(status));
}

__attribute__((visibility("default"))) void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                                                              intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                                                              intptr_t blockZ, int32_t sharedBytes, CUstream stream,
                                                              void **params, void **extra, size_t) {
  if (!currentRun) {
    lastErrorText = "a kernel was launched outside a run";
    return;
  }
  if (!function || !currentRun->error.empty())
    return; // the reason is recorded; the run fails at its end
  CUresult result = cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes, stream, params,
                                   extra);
  if (result != CUDA_SUCCESS)
    recordRunError("launching a kernel (grid " + std::to_string(gridX) + ", block " + std::to_string(blockX) +
                   ") failed: " + describe(result));
}
}
