//===- Distributed.h - data-parallel training across processes --*- C++ -*-===//
//
// libsymrt_mpi: the processes of an `mpirun -np N` job train one model
// together, each with its executor group (symc/ExecutorGroup.h), as MXNet's
// kvstore 'dist_sync' does: every step's gradients are summed over the
// processes (MPI_Allreduce, in buckets), so every worker applies the same
// update. Open MPI carries the bytes; symc has no transport of its own.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_DISTRIBUTED_H
#define SYMC_RUNTIME_DISTRIBUTED_H

#include "symc/ExecutorGroup.h"

#include <map>
#include <memory>
#include <string>

namespace symc {

class MpiWorkers {
public:
  /// The job's workers (MPI_COMM_WORLD), MPI initialized on first use (and
  /// finalized at exit). Errors are symc::Error, raised on every rank; a
  /// collective that has not completed within SYMC_MPI_TIMEOUT seconds (600
  /// by default: another rank died or stalled) ends the job (MPI_Abort).
  static MpiWorkers &get();
  int rank() const { return rank_; }
  int size() const { return size_; }

  /// Every rank's `digest` of `what` must equal rank 0's, else every rank
  /// raises naming the ranks that differ (other artifacts, other shapes).
  void checkSame(const std::string &what, const std::string &digest) const;
  /// Rank 0's parameters and aux states to every worker's devices
  /// (kvstore.init then pull).
  void broadcastParams(DataParallelExecutorGroup &group) const;
  /// After group.aggregateGradients(): each parameter's gradient summed over
  /// the workers into every device's gradient (the whole job's batch's
  /// gradient). `type` Local (kvstore dist_sync): MPI_Allreduce in host
  /// memory, gradients under a quarter of `bucketBytes` packed into buckets
  /// of that size, larger ones summed where they lie; Device or Nccl (dist_sync_device):
  /// NCCL over the workers' first GPUs (one rank per process, the
  /// communicator's id sent through MPI), then to the other devices.
  void allReduceGradients(DataParallelExecutorGroup &group, KVStoreType type = KVStoreType::Local,
                          size_t bucketBytes = size_t(4) << 20);

private:
  MpiWorkers();
  ~MpiWorkers();
  void allReduceOnHost(const std::vector<std::vector<NDArray>> &gradients, size_t bucketBytes) const;
  /// Sums `floats` floats at `data` over the workers, in place.
  void sumInPlace(float *data, size_t floats) const;
  void allReduceOnGpus(const std::vector<std::vector<NDArray>> &gradients);
  /// Rank 0's `bytes` bytes at `data` to every rank.
  void broadcast(void *data, size_t bytes, const char *what) const;

  int rank_ = 0, size_ = 1, timeout_ = 600;
  /// The job's NCCL communicator over each worker's first GPU, by the
  /// local device it uses.
  std::map<int, std::unique_ptr<DeviceCollective>> collectives_;
};

} // namespace symc

#endif
