//===- DeviceCollective.h - gradient all-reduce across GPUs -----*- C++ -*-===//
//
// An NCCL communicator through libsymrt_cuda's device table: one rank per
// GPU, this process holding some of them (all, for one process's executor
// group; one, for each process of an mpirun job).
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_DIST_DEVICECOLLECTIVE_H
#define SYMC_RUNTIME_DIST_DEVICECOLLECTIVE_H

#include "../core/DeviceAPI.h"
#include "symc/NDArray.h"

#include <string>
#include <vector>

namespace symc {

class DeviceCollective {
public:
  static constexpr size_t kIdBytes = SYMC_COLLECTIVE_ID_BYTES;
  /// A new communicator's id (bytes): one rank makes it, the others are
  /// given it.
  static std::string newId();
  /// Joins ranks [firstRank, firstRank + devices.size()) of the `ranks` of
  /// communicator `id`, rank firstRank + i on devices[i] (GPUs, each once).
  DeviceCollective(std::vector<Context> devices, const std::string &id, int ranks, int firstRank);
  /// A communicator of its own over `devices`, every rank in this process.
  explicit DeviceCollective(std::vector<Context> devices);
  ~DeviceCollective();
  DeviceCollective(const DeviceCollective &) = delete;
  DeviceCollective &operator=(const DeviceCollective &) = delete;

  /// Sums every ranks' arrays in place: arrays[p][r] is array p of this
  /// process's rank r (float32 or float64, the same shape on every rank).
  /// Past `timeoutSeconds` (a rank died or stalled) it throws, and the
  /// communicator is unusable.
  void allReduceSum(const std::vector<std::vector<NDArray>> &arrays, int timeoutSeconds) const;
  const std::vector<Context> &devices() const { return devices_; }

private:
  /// `devices`, if they are GPUs, each once; MXNetError otherwise.
  static std::vector<Context> checked(std::vector<Context> devices);
  void join(const std::string &id, int ranks, int firstRank);

  std::vector<Context> devices_;
  std::vector<void *> comms_;
};

} // namespace symc

#endif
