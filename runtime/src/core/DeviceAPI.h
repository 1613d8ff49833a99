//===- DeviceAPI.h - what libsymrt asks of a device runtime ------*- C++ -*-===//
//
// libsymrt_cuda exports symcCudaDeviceAPI(), returning this table; libsymrt
// loads it (Device.cpp) when an array or executor first needs a GPU, so
// libsymrt itself never links the CUDA driver. Every function returns 0, or
// non-zero with the reason in lastError() (per thread).
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_CORE_DEVICEAPI_H
#define SYMC_RUNTIME_CORE_DEVICEAPI_H

#include <stddef.h>

extern "C" {

#define SYMC_DEVICE_API_VERSION 3
/// An NCCL communicator's id (NCCL_UNIQUE_ID_BYTES).
#define SYMC_COLLECTIVE_ID_BYTES 128

struct SymcDeviceAPI {
  int version;
  int (*deviceCount)(int *count);
  int (*allocate)(int device, size_t bytes, void **out);
  int (*release)(int device, void *pointer);
  int (*copyToDevice)(int device, void *dst, const void *src, size_t bytes);
  int (*copyToHost)(int device, void *dst, const void *src, size_t bytes);
  int (*copyOnDevice)(int device, void *dst, const void *src, size_t bytes);
  int (*fillZero)(int device, void *dst, size_t bytes);
  /// A stream of the executor's own on `device`.
  int (*createStream)(int device, void **stream);
  int (*destroyStream)(int device, void *stream);
  /// Kernels the calling thread launches go to `stream` until endRun,
  /// which waits for them and reports the first failed launch.
  int (*beginRun)(int device, void *stream);
  int (*endRun)(int device, void *stream);
  const char *(*lastError)(void);
  /// The library holding code at [begin, end) (an artifact's) is about to
  /// be unloaded: the modules loaded from images there go, since a library
  /// loaded later may reuse the addresses.
  void (*forgetCode)(const void *begin, const void *end);

  // Collectives, on NCCL (libnccl.so.2, loaded on first use).
  /// A new communicator's id: one rank makes it, the others are given it.
  int (*collectiveId)(char id[SYMC_COLLECTIVE_ID_BYTES]);
  /// This process's ranks [firstRank, firstRank + count) of the `ranks` of
  /// communicator `id`, rank firstRank + i on devices[i]; comms[i] gets
  /// each. Returns when every rank has joined.
  int (*collectiveJoin)(const char id[SYMC_COLLECTIVE_ID_BYTES], int ranks, int firstRank, int count,
                        const int *devices, void **comms);
  int (*collectiveLeave)(void *comm);
  /// Sums, over every rank of the communicator, each of `arrays` buffers
  /// in place: buffers[r * arrays + a] on comms[r] (r < count, this
  /// process's ranks), elements[a] of float32 (isDouble[a] 0) or float64.
  /// Waits for the sums; past `timeoutSeconds` (a rank died or stalled) it
  /// aborts the communicator and fails.
  int (*allReduceSum)(int count, void *const *comms, int arrays, void *const *buffers, const size_t *elements,
                      const int *isDouble, int timeoutSeconds);
};

typedef const SymcDeviceAPI *(*SymcDeviceAPIEntry)(void);
const SymcDeviceAPI *symcCudaDeviceAPI(void);
}

#endif
