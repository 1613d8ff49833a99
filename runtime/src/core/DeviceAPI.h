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

#define SYMC_DEVICE_API_VERSION 1

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
};

typedef const SymcDeviceAPI *(*SymcDeviceAPIEntry)(void);
const SymcDeviceAPI *symcCudaDeviceAPI(void);
}

#endif
