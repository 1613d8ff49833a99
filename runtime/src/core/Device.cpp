//===- Device.cpp - GPU memory and runs through libsymrt_cuda -------------===//
#include "Device.h"

#include <atomic>
#include <dlfcn.h>
#include <mutex>

namespace symc {

namespace {

/// libsymrt_cuda beside libsymrt, else on the library search path.
std::string cudaRuntimePath() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void *>(&cudaRuntimePath), &info) && info.dli_fname) {
    std::string self = info.dli_fname;
    size_t slash = self.rfind('/');
    if (slash != std::string::npos)
      return self.substr(0, slash + 1) + "libsymrt_cuda.so.0.2";
  }
  return "libsymrt_cuda.so.0.2";
}

const SymcDeviceAPI *loadCudaRuntime(std::string &error) {
  std::string path = cudaRuntimePath();
  void *handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  // Beside libsymrt, its own reason (a missing driver) is the one to report.
  std::string reason = handle ? "" : dlerror();
  if (!handle && reason.find(path + ": cannot open shared object file") != std::string::npos) {
    handle = dlopen("libsymrt_cuda.so.0.2", RTLD_NOW | RTLD_GLOBAL);
    reason = handle ? "" : dlerror();
  }
  if (!handle) {
    error = "gpu contexts need libsymrt_cuda and the NVIDIA driver (libcuda.so.1): " + reason;
    return nullptr;
  }
  auto entry = reinterpret_cast<SymcDeviceAPIEntry>(dlsym(handle, "symcCudaDeviceAPI"));
  const SymcDeviceAPI *api = entry ? entry() : nullptr;
  if (!api || api->version != SYMC_DEVICE_API_VERSION) {
    error = path + " is not the libsymrt_cuda of this libsymrt (device API version " +
            std::to_string(SYMC_DEVICE_API_VERSION) + ")";
    return nullptr;
  }
  return api;
}

} // namespace

std::atomic<const SymcDeviceAPI *> loadedApi{nullptr};

const SymcDeviceAPI &cudaDevice() {
  static std::once_flag once;
  static const SymcDeviceAPI *api = nullptr;
  static std::string error;
  std::call_once(once, [] {
    api = loadCudaRuntime(error);
    loadedApi = api;
  });
  if (!api)
    throw Error("MXNetError", error);
  return *api;
}

const SymcDeviceAPI *loadedCudaDevice() { return loadedApi; }

void checkDevice(int status, const std::string &what) {
  if (status != 0)
    throw Error("MXNetError", what + ": " + cudaDevice().lastError());
}

std::shared_ptr<uint8_t> allocateOnDevice(Context ctx, size_t bytes) {
  const SymcDeviceAPI &api = cudaDevice();
  void *pointer = nullptr;
  checkDevice(api.allocate(ctx.devId, bytes, &pointer), "allocating an array on " + ctx.str());
  int device = ctx.devId;
  std::shared_ptr<uint8_t> storage(static_cast<uint8_t *>(pointer),
                                   [&api, device](uint8_t *p) { api.release(device, p); });
  checkDevice(api.fillZero(ctx.devId, pointer, bytes), "zeroing an array on " + ctx.str());
  return storage;
}

DeviceStream::DeviceStream(Context ctx) : ctx_(ctx) {
  checkDevice(cudaDevice().createStream(ctx.devId, &stream_), "creating a stream on " + ctx.str());
}

DeviceStream::~DeviceStream() { cudaDevice().destroyStream(ctx_.devId, stream_); }

} // namespace symc
