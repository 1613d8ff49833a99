//===- CudaDevice.cpp - libsymrt_cuda: GPU arrays and kernel launches -----===//
//
// Two faces on the CUDA driver API:
// - the device table libsymrt loads (DeviceAPI.h): memory, copies, streams
//   and runs, on each device's primary context (the one CUDA's runtime and
//   PyTorch share), and gradient all-reduces on NCCL (loaded with dlopen
//   when first needed, so that a machine without it still runs kernels);
// - the launch functions generated host code calls (MLIR's gpu-to-llvm
//   names them mgpu*), which run on the calling thread's current run: the
//   module is loaded once per context and kept (MLIR 19's host code asks
//   for it at every launch), and launches go to the executor's stream
//   without a synchronization each.
// With SYMC_CUDA_PROFILE set, every launch and GEMM is timed by a pair of
// events, and the totals by kernel (named after their MXNet nodes) print to
// stderr when the process exits.
//
//===----------------------------------------------------------------------===//
#include "core/DeviceAPI.h"

#include "symc/ArtifactABI.h"

#include <cublas_v2.h>
#include <cuda.h>
#if SYMC_HAVE_NCCL
#include <nccl.h>
#endif

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
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

/// A launch or GEMM timed on its stream (SYMC_CUDA_PROFILE).
struct TimedWork {
  std::string name;
  CUevent start = nullptr, stop = nullptr;
};

/// Time spent by kernel (or GEMM shape) over the process, printed at exit.
class Profile {
public:
  static Profile *active() {
    static Profile *instance = std::getenv("SYMC_CUDA_PROFILE") ? new Profile : nullptr;
    return instance;
  }

  /// Adds the elapsed times of `work`, whose stream has finished, but for
  /// each kernel's or GEMM shape's first (cold: the driver and cuBLAS load
  /// code at first use), and releases its events.
  void collect(std::vector<TimedWork> &work) {
    std::lock_guard<std::mutex> lock(mutex);
    for (TimedWork &w : work) {
      float ms = 0;
      bool cold = totals.find(w.name) == totals.end();
      Total &total = totals[w.name];
      if (!cold && cuEventElapsedTime(&ms, w.start, w.stop) == CUDA_SUCCESS) {
        total.ms += ms;
        ++total.calls;
      }
      cuEventDestroy(w.start);
      cuEventDestroy(w.stop);
    }
    work.clear();
  }

private:
  struct Total {
    double ms = 0;
    int64_t calls = 0;
  };

  Profile() { std::atexit([] { active()->print(); }); }

  void print() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<std::pair<std::string, Total>> rows(totals.begin(), totals.end());
    std::sort(rows.begin(), rows.end(), [](const auto &a, const auto &b) { return a.second.ms > b.second.ms; });
    double all = 0;
    for (const auto &row : rows)
      all += row.second.ms;
    std::fprintf(stderr,
                 "SYMC_CUDA_PROFILE: %.3f ms on the GPU in %zu kernels and GEMMs (each one's first call left "
                 "out)\n%10s %8s %6s  %s\n",
                 all, rows.size(), "total ms", "calls", "share", "kernel");
    for (const auto &[name, total] : rows)
      std::fprintf(stderr, "%10.3f %8lld %5.1f%%  %s\n", total.ms, static_cast<long long>(total.calls),
                   all > 0 ? 100 * total.ms / all : 0.0, name.c_str());
  }

  std::mutex mutex;
  std::map<std::string, Total> totals;
};

/// The run the calling thread is in (beginRun .. endRun): where its
/// launches go, the first launch failure, and its timed work (profiling).
struct Run {
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  std::string error;
  std::vector<TimedWork> timed;
};
thread_local std::optional<Run> currentRun;

/// Runs `work` on the current run's stream, between two events, under
/// `name()`, when profiling.
template <typename Name, typename Work> void timeOnStream(Name name, Work work) {
  if (!Profile::active()) {
    work();
    return;
  }
  TimedWork timed{name()};
  if (cuEventCreate(&timed.start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
      cuEventCreate(&timed.stop, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
    work();
    return;
  }
  cuEventRecord(timed.start, currentRun->stream);
  work();
  cuEventRecord(timed.stop, currentRun->stream);
  currentRun->timed.push_back(std::move(timed));
}

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

  /// Unloads the modules loaded from images in [begin, end), and forgets
  /// their kernels.
  void forget(const void *begin, const void *end) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = modules.begin(); it != modules.end();) {
      auto [context, image] = it->first;
      if (std::less<const void *>()(image, begin) || !std::less<const void *>()(image, end)) {
        ++it;
        continue;
      }
      CUmodule module = it->second;
      for (auto f = functions.begin(); f != functions.end();)
        f = f->first.first == module ? functions.erase(f) : std::next(f);
      if (cuCtxPushCurrent(context) == CUDA_SUCCESS) {
        cuModuleUnload(module);
        CUcontext popped;
        cuCtxPopCurrent(&popped);
      }
      it = modules.erase(it);
    }
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
  std::vector<TimedWork> timed = std::move(currentRun->timed);
  currentRun.reset();
  CUresult waited = cuStreamSynchronize(static_cast<CUstream>(stream));
  if (Profile *profile = Profile::active())
    profile->collect(timed);
  if (!error.empty())
    return fail(error);
  return check(waited, "running the kernels");
}

const char *lastError() { return lastErrorText.c_str(); }

void forgetCode(const void *begin, const void *end) { modules().forget(begin, end); }

#if SYMC_HAVE_NCCL
static_assert(SYMC_COLLECTIVE_ID_BYTES == NCCL_UNIQUE_ID_BYTES, "the device API's communicator id is NCCL's");

/// libnccl.so.2's functions, loaded on first use.
struct Nccl {
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommDestroy) commDestroy = nullptr;
  decltype(&ncclCommAbort) commAbort = nullptr;
  decltype(&ncclCommGetAsyncError) commGetAsyncError = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclGroupStart) groupStart = nullptr;
  decltype(&ncclGroupEnd) groupEnd = nullptr;
  decltype(&ncclGetErrorString) errorString = nullptr;
  std::string error; // why it did not load
};

const Nccl &nccl() {
  static const Nccl loaded = [] {
    Nccl n;
    void *handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      n.error = std::string("GPU collectives need NCCL (libnccl.so.2): ") + dlerror();
      return n;
    }
    auto bind = [&](auto &function, const char *name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
      if (!function && n.error.empty())
        n.error = std::string("libnccl.so.2 has no ") + name + " (NCCL 2.4 or later is needed)";
    };
    bind(n.getUniqueId, "ncclGetUniqueId");
    bind(n.commInitRank, "ncclCommInitRank");
    bind(n.commDestroy, "ncclCommDestroy");
    bind(n.commAbort, "ncclCommAbort");
    bind(n.commGetAsyncError, "ncclCommGetAsyncError");
    bind(n.allReduce, "ncclAllReduce");
    bind(n.groupStart, "ncclGroupStart");
    bind(n.groupEnd, "ncclGroupEnd");
    bind(n.errorString, "ncclGetErrorString");
    return n;
  }();
  return loaded;
}

/// 0, or fails with `what` and NCCL's reason.
int checkNccl(ncclResult_t result, const std::string &what) {
  return result == ncclSuccess ? 0 : fail(what + " failed: " + nccl().errorString(result));
}

/// One rank of a communicator: its device, and the stream its collectives
/// run on (blocking, so they follow the executors' synchronous copies).
struct Collective {
  ncclComm_t comm = nullptr;
  CUstream stream = nullptr;
  int device = 0;
  bool aborted = false;
};

int collectiveId(char id[SYMC_COLLECTIVE_ID_BYTES]) {
  if (!nccl().error.empty())
    return fail(nccl().error);
  ncclUniqueId unique;
  if (int status = checkNccl(nccl().getUniqueId(&unique), "ncclGetUniqueId"))
    return status;
  std::memcpy(id, unique.internal, SYMC_COLLECTIVE_ID_BYTES);
  return 0;
}

int collectiveLeave(void *comm) {
  auto *collective = static_cast<Collective *>(comm);
  if (!collective)
    return 0;
  int status = use(collective->device);
  if (!status && collective->comm && !collective->aborted)
    status = checkNccl(nccl().commDestroy(collective->comm), "ncclCommDestroy");
  if (collective->stream)
    cuStreamDestroy(collective->stream);
  delete collective;
  return status;
}

int collectiveJoin(const char id[SYMC_COLLECTIVE_ID_BYTES], int ranks, int firstRank, int count, const int *devices,
                   void **comms) {
  if (!nccl().error.empty())
    return fail(nccl().error);
  ncclUniqueId unique;
  std::memcpy(unique.internal, id, SYMC_COLLECTIVE_ID_BYTES);
  std::vector<Collective *> joined;
  auto leaveAll = [&](int status) {
    for (Collective *collective : joined)
      collectiveLeave(collective);
    return status;
  };
  for (int i = 0; i < count; ++i) {
    joined.push_back(new Collective{nullptr, nullptr, devices[i], false});
    if (int status = use(devices[i]))
      return leaveAll(status);
    if (int status = check(cuStreamCreate(&joined.back()->stream, CU_STREAM_DEFAULT), "cuStreamCreate"))
      return leaveAll(status);
  }
  // One thread joining several ranks groups the calls, each with its
  // device current (NCCL reads the current device).
  if (int status = checkNccl(nccl().groupStart(), "ncclGroupStart"))
    return leaveAll(status);
  int joinStatus = 0;
  for (int i = 0; i < count && !joinStatus; ++i) {
    joinStatus = use(devices[i]);
    if (!joinStatus)
      joinStatus = checkNccl(nccl().commInitRank(&joined[i]->comm, ranks, unique, firstRank + i),
                             "joining rank " + std::to_string(firstRank + i) + " of " + std::to_string(ranks) +
                                 " on gpu(" + std::to_string(devices[i]) + ") (ncclCommInitRank)");
  }
  int endStatus = checkNccl(nccl().groupEnd(), "joining the NCCL communicator (ncclGroupEnd)");
  if (joinStatus || endStatus)
    return leaveAll(joinStatus ? joinStatus : endStatus);
  for (int i = 0; i < count; ++i)
    comms[i] = joined[i];
  return 0;
}

/// Waits for every rank's stream; an asynchronous NCCL error or the
/// deadline aborts all of them.
int waitForCollectives(const std::vector<Collective *> &ranks, int timeoutSeconds) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSeconds);
  auto abortAll = [&](std::string reason) {
    for (Collective *collective : ranks) {
      nccl().commAbort(collective->comm);
      collective->aborted = true;
    }
    return fail(std::move(reason));
  };
  for (Collective *collective : ranks) {
    if (int status = use(collective->device))
      return status;
    for (;;) {
      CUresult state = cuStreamQuery(collective->stream);
      if (state == CUDA_SUCCESS)
        break;
      if (state != CUDA_ERROR_NOT_READY)
        return abortAll("the NCCL all-reduce failed on gpu(" + std::to_string(collective->device) +
                        "): " + describe(state));
      ncclResult_t async = ncclSuccess;
      nccl().commGetAsyncError(collective->comm, &async);
      if (async != ncclSuccess && async != ncclInProgress)
        return abortAll(std::string("the NCCL all-reduce failed: ") + nccl().errorString(async));
      if (std::chrono::steady_clock::now() > deadline)
        return abortAll("the NCCL all-reduce did not complete within " + std::to_string(timeoutSeconds) +
                        " s: another rank died or stalled");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  return 0;
}

int allReduceSum(int count, void *const *comms, int arrays, void *const *buffers, const size_t *elements,
                 const int *isDouble, int timeoutSeconds) {
  std::vector<Collective *> ranks;
  for (int r = 0; r < count; ++r) {
    ranks.push_back(static_cast<Collective *>(comms[r]));
    if (ranks.back()->aborted)
      return fail("the NCCL communicator was aborted by an earlier failure");
  }
  if (int status = checkNccl(nccl().groupStart(), "ncclGroupStart"))
    return status;
  int status = 0;
  for (int r = 0; r < count && !status; ++r) {
    status = use(ranks[r]->device);
    for (int a = 0; a < arrays && !status; ++a) {
      void *buffer = buffers[static_cast<size_t>(r) * arrays + a];
      status = checkNccl(nccl().allReduce(buffer, buffer, elements[a], isDouble[a] ? ncclFloat64 : ncclFloat32,
                                          ncclSum, ranks[r]->comm, ranks[r]->stream),
                         "ncclAllReduce");
    }
  }
  int ended = checkNccl(nccl().groupEnd(), "the NCCL all-reduce (ncclGroupEnd)");
  if (status || ended)
    return status ? status : ended;
  return waitForCollectives(ranks, timeoutSeconds);
}
#else
constexpr const char *kNoNccl = "this libsymrt_cuda was built without NCCL (nccl.h was not found): GPU collectives "
                                "are unavailable";
int collectiveId(char *) { return fail(kNoNccl); }
int collectiveJoin(const char *, int, int, int, const int *, void **) { return fail(kNoNccl); }
int collectiveLeave(void *) { return 0; }
int allReduceSum(int, void *const *, int, void *const *, const size_t *, const int *, int) { return fail(kNoNccl); }
#endif

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
                           lastError,
                           forgetCode,
                           collectiveId,
                           collectiveJoin,
                           collectiveLeave,
                           allReduceSum};

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

/// A matrix (or stack of them) of a GEMM: row-major, or column-major (a
/// transposed view, whose rows' stride is 1).
struct GemmOperand {
  const float *data;
  int64_t rows, columns, leading, batch, batchStride;
  bool columnMajor;
};

GemmOperand gemmOperand(int64_t rank, const SymcMemRefF32 *m) {
  const int64_t *sizes = m->sizes_and_strides, *strides = m->sizes_and_strides + rank;
  bool columnMajor = strides[rank - 1] != 1 && strides[rank - 2] == 1;
  return {m->aligned + m->offset,
          sizes[rank - 2],
          sizes[rank - 1],
          columnMajor ? strides[rank - 1] : strides[rank - 2],
          rank == 3 ? sizes[0] : 1,
          rank == 3 ? strides[0] : 0,
          columnMajor};
}

/// Row-major C = A B is column-major C^T = B^T A^T: cuBLAS multiplies the
/// operands the other way round, each in its own layout (a column-major
/// operand is the transpose of the row-major matrix it reads).
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
  auto shape = [&] {
    return "cuBLAS GEMM (batch x M x K x N) " + std::to_string(c.batch) + "x" + std::to_string(c.rows) + "x" +
           std::to_string(a.columns) + "x" + std::to_string(c.columns);
  };
  if (status == CUBLAS_STATUS_SUCCESS)
    timeOnStream(shape, [&] {
      status = cublasSgemmStridedBatched(
          handle, b.columnMajor ? CUBLAS_OP_T : CUBLAS_OP_N, a.columnMajor ? CUBLAS_OP_T : CUBLAS_OP_N,
          static_cast<int>(c.columns), static_cast<int>(c.rows),
          static_cast<int>(a.columns), &one, b.data, static_cast<int>(b.leading), b.batchStride, a.data,
          static_cast<int>(a.leading), a.batchStride, &one, const_cast<float *>(c.data), static_cast<int>(c.leading),
          c.batchStride, static_cast<int>(c.batch));
    });
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
  auto name = [&] {
    const char *text = nullptr;
    return std::string(cuFuncGetName(&text, function) == CUDA_SUCCESS && text ? text : "a kernel");
  };
  CUresult result;
  timeOnStream(name, [&] {
    result = cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ, sharedBytes, stream, params, extra);
  });
  if (result != CUDA_SUCCESS)
    recordRunError("launching a kernel (grid " + std::to_string(gridX) + ", block " + std::to_string(blockX) +
                   ") failed: " + describe(result));
}
}
