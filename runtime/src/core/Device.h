//===- Device.h - GPU memory and runs through libsymrt_cuda -----*- C++ -*-===//
#ifndef SYMC_RUNTIME_CORE_DEVICE_H
#define SYMC_RUNTIME_CORE_DEVICE_H

#include "DeviceAPI.h"
#include "symc/NDArray.h"

#include <memory>
#include <string>

namespace symc {

/// libsymrt_cuda's table, loaded (RTLD_GLOBAL: artifacts' launch code
/// resolves against it) on first use. Throws MXNetError naming what is
/// missing (the library, the driver) when it cannot load.
const SymcDeviceAPI &cudaDevice();
/// libsymrt_cuda's table where it has been loaded, else null (loads nothing).
const SymcDeviceAPI *loadedCudaDevice();

/// Throws MXNetError with `what` and libsymrt_cuda's reason when `status`
/// is non-zero.
void checkDevice(int status, const std::string &what);

/// Zeroed memory for `bytes` on `ctx` (a GPU), freed with the last reference.
std::shared_ptr<uint8_t> allocateOnDevice(Context ctx, size_t bytes);

/// The calling executor's stream on a GPU: launches of its runs go there.
class DeviceStream {
public:
  explicit DeviceStream(Context ctx);
  ~DeviceStream();
  DeviceStream(const DeviceStream &) = delete;
  DeviceStream &operator=(const DeviceStream &) = delete;

  /// Runs `body` (an entry point's call) with launches on this stream and
  /// waits for them; a failed launch is an MXNetError.
  template <typename Body> void run(Body &&body) {
    checkDevice(cudaDevice().beginRun(ctx_.devId, stream_), "starting a run on " + ctx_.str());
    body();
    checkDevice(cudaDevice().endRun(ctx_.devId, stream_), "running on " + ctx_.str());
  }

private:
  Context ctx_;
  void *stream_ = nullptr;
};

} // namespace symc

#endif
