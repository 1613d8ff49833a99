//===- ExecutorGroup.h - data-parallel executors over one batch -*- C++ -*-===//
//
// MXNet's executor manager (shared/mxnet-semantics.md section 3): one
// executor per context, each bound to its slice of the batch by
// _split_input_slice, run concurrently, with the gradients of the
// parameters summed over the executors as kvstore 'local' sums them.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_EXECUTORGROUP_H
#define SYMC_RUNTIME_EXECUTORGROUP_H

#include "symc/Executor.h"
#include "symc/Optimizer.h"

#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace symc {

/// Rows [begin, end) of a batch.
struct BatchSlice {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
  bool operator==(const BatchSlice &o) const { return begin == o.begin && end == o.end; }
};

/// mxnet.executor_manager._split_input_slice: device i gets round(w_i *
/// batch / sum(w)) rows (half to even), the last one the shortfall; slices
/// are clipped to the batch, and an empty one is ValueError("Too many
/// slices. Some splits are empty.").
std::vector<BatchSlice> splitInputSlice(int64_t batchSize, const std::vector<double> &workLoad);

/// How a group's gradients are summed, as MXNet's kvstore types sum them:
/// 'local' in host memory (arrays on GPUs staged through it); 'device' on
/// the GPUs, with NCCL where each executor has a GPU of its own and NCCL
/// loads, else as 'local'; 'nccl' with NCCL only.
enum class KVStoreType { Local, Device, Nccl };
/// "local", "device" or "nccl"; ValueError otherwise.
KVStoreType parseKVStoreType(const std::string &name);

class DeviceCollective;

/// executor_manager.DataParallelExecutorGroup on one artifact.
class DataParallelExecutorGroup {
public:
  /// Binds one executor per context to its slice of the batch. `inputShapes`
  /// are the whole-batch shapes of the data and label inputs (the batch on
  /// axis 0); `paramNames` get gradients (grad_req 'write'), every other
  /// argument none. With `shared` (bucketing), executor i shares parameters,
  /// gradients, aux states and memory with `shared`'s executor i.
  DataParallelExecutorGroup(std::shared_ptr<const Artifact> artifact, const std::vector<Context> &contexts,
                            const std::vector<double> &workLoad, const ShapeDict &inputShapes,
                            const std::vector<std::string> &paramNames,
                            const DataParallelExecutorGroup *shared = nullptr);

  /// Copies each executor's rows of the whole-batch arrays named like
  /// inputs into its input arrays ("Batch size miss match" otherwise).
  void loadDataBatch(const ArrayDict &batch);
  /// forward / backward on every executor at once, each on its own thread
  /// with its share of `numThreads` (0: the hardware's threads).
  void forward(bool isTrain);
  void backward();
  /// Sums each parameter's gradient over the executors into every
  /// executor's gradient, in place (kvstore push then pull): each
  /// executor's gradient then is the whole batch's.
  void aggregateGradients(KVStoreType type = KVStoreType::Local);
  /// MXNet's grad_arrays: per parameter that has gradients, per executor.
  std::vector<std::vector<NDArray>> gradArrays() const;

  /// The optimizer step on every executor's parameters (after
  /// aggregateGradients), each with its own state as MXNet's updater keeps
  /// it: key parameter index * devices + device.
  void update(SGD &sgd);

  /// copy_params_from on every executor.
  void setParams(const ArrayDict &args, const ArrayDict &aux, bool allowExtra = false);
  /// The parameters and aux states averaged over the executors, as
  /// DataParallelExecutorManager.copy_to computes them.
  void copyTo(ArrayDict &args, ArrayDict &aux) const;

  const std::vector<std::shared_ptr<Executor>> &executors() const { return execs_; }
  const std::vector<BatchSlice> &slices() const { return slices_; }
  const std::vector<Context> &contexts() const { return contexts_; }
  const std::vector<std::string> &paramNames() const { return paramNames_; }
  int64_t batchSize() const { return batchSize_; }
  void setNumThreads(int threads) { numThreads_ = threads; }

private:
  /// Runs `work(i)` for every executor i, concurrently; rethrows the first
  /// error after all have finished.
  void onEachExecutor(const std::function<void(size_t)> &work);
  /// Sums host arrays (per parameter, per executor), each executor's
  /// thread a part of every parameter.
  void sumOnHost(const std::vector<std::vector<NDArray>> &gradients);
  /// The NCCL communicator over the executors' GPUs (made on first use);
  /// null for 'device' where NCCL cannot be used.
  const DeviceCollective *collective(KVStoreType type);

  std::vector<std::shared_ptr<Executor>> execs_;
  std::vector<Context> contexts_;
  std::vector<BatchSlice> slices_;
  std::vector<std::string> inputNames_, paramNames_;
  int64_t batchSize_ = 0;
  int numThreads_ = 0;
  std::shared_ptr<DeviceCollective> collective_;
  bool collectiveUnavailable_ = false;
};

/// executor_manager.DataParallelExecutorManager: the executor group of the
/// default bucket and, with a generator (`sym_gen`), one group per bucket
/// key, bound to the artifact it gives and sharing the default group's
/// parameters, gradients, aux states and memory.
class DataParallelExecutorManager {
public:
  /// The artifact of bucket `key` (MXNet's sym_gen).
  using BucketArtifacts = std::function<std::shared_ptr<const Artifact>(const std::string &key)>;

  /// `workLoad` empty: one share per context; else one per context
  /// ("Invalid settings for work load. " otherwise).
  DataParallelExecutorManager(std::shared_ptr<const Artifact> artifact, const std::vector<Context> &contexts,
                              const ShapeDict &inputShapes, const std::vector<std::string> &paramNames,
                              std::vector<double> workLoad = {}, BucketArtifacts symGen = nullptr,
                              std::string defaultBucketKey = "");

  /// Loads a batch into the group of `bucketKey` (binding it on first use,
  /// for the batch's shapes `bucketShapes`), which forward, backward and the
  /// rest then run.
  void loadDataBatch(const ArrayDict &batch, const std::string &bucketKey = "", const ShapeDict &bucketShapes = {});

  /// The group of the batch loaded last (the default one before any).
  const std::shared_ptr<DataParallelExecutorGroup> &currentGroup() const { return current_; }
  const std::shared_ptr<DataParallelExecutorGroup> &defaultGroup() const { return groups_.at(defaultKey_); }
  const std::vector<BatchSlice> &slices() const { return slices_; }

private:
  std::vector<Context> contexts_;
  std::vector<double> workLoad_;
  std::vector<BatchSlice> slices_;
  std::vector<std::string> paramNames_;
  BucketArtifacts symGen_;
  std::string defaultKey_;
  std::map<std::string, std::shared_ptr<DataParallelExecutorGroup>> groups_;
  std::shared_ptr<DataParallelExecutorGroup> current_;
};

} // namespace symc

#endif
