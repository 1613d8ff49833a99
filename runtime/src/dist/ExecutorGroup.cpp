//===- ExecutorGroup.cpp - data-parallel executors over one batch ---------===//
#include "symc/ExecutorGroup.h"

#include "DeviceCollective.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <numeric>
#include <thread>

namespace symc {

std::vector<BatchSlice> splitInputSlice(int64_t batchSize, const std::vector<double> &workLoad) {
  if (std::any_of(workLoad.begin(), workLoad.end(), [](double w) { return !std::isfinite(w) || w < 0; }))
    throw Error("ValueError", "work_load_list must hold non-negative numbers");
  double total = std::accumulate(workLoad.begin(), workLoad.end(), 0.0);
  if (!(total > 0)) // MXNet divides by it
    throw Error("ZeroDivisionError", "float division by zero");
  std::vector<int64_t> counts;
  for (double w : workLoad) // Python 3's round: half to even, as nearbyint
    counts.push_back(static_cast<int64_t>(std::nearbyint(w * static_cast<double>(batchSize) / total)));
  int64_t sum = std::accumulate(counts.begin(), counts.end(), int64_t(0));
  if (!counts.empty() && sum < batchSize)
    counts.back() += batchSize - sum;
  std::vector<BatchSlice> slices;
  int64_t end = 0;
  for (int64_t count : counts) {
    int64_t begin = std::min(end, batchSize);
    end = std::min(begin + count, batchSize);
    if (begin >= end)
      throw Error("ValueError", "Too many slices. Some splits are empty.");
    slices.push_back({begin, end});
  }
  return slices;
}

namespace {

/// An in-process all-reduce waits on no other process: only a GPU fault
/// could stall it.
constexpr int kInProcessTimeoutSeconds = 600;

/// Executor i's shapes: the inputs' with the batch dim of its slice.
ShapeDict sliceShapes(const ShapeDict &inputShapes, const BatchSlice &slice) {
  ShapeDict shapes = inputShapes;
  for (auto &[name, shape] : shapes)
    if (!shape.empty())
      shape[0] = slice.size();
  return shapes;
}

/// Sums elements [begin, end) of `arrays` and writes the sum into each.
template <typename T> void sumInto(const std::vector<NDArray> &arrays, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    T sum = 0;
    for (const NDArray &a : arrays)
      sum += a.data<T>()[i];
    for (const NDArray &a : arrays)
      a.data<T>()[i] = sum;
  }
}

/// The element-wise mean of `arrays` (one per executor).
NDArray mean(const std::vector<NDArray> &arrays) {
  NDArray total(arrays.front().shape(), DType::Float64);
  for (const NDArray &a : arrays) {
    NDArray wide(a.shape(), DType::Float64);
    wide.copyFrom(a);
    total.addFrom(wide);
  }
  double *values = total.data<double>();
  for (size_t i = 0; i < total.size(); ++i)
    values[i] /= static_cast<double>(arrays.size());
  NDArray result(total.shape(), arrays.front().dtype());
  result.copyFrom(total);
  return result;
}

/// `value` into dict[name]'s array if it has one, else as a new entry.
void storeInto(ArrayDict &dict, const std::string &name, const NDArray &value) {
  auto it = dict.find(name);
  if (it == dict.end() || it->second.isNone())
    dict[name] = value;
  else
    it->second.copyFrom(value, name);
}

} // namespace

DataParallelExecutorGroup::DataParallelExecutorGroup(std::shared_ptr<const Artifact> artifact,
                                                     const std::vector<Context> &contexts,
                                                     const std::vector<double> &workLoad,
                                                     const ShapeDict &inputShapes,
                                                     const std::vector<std::string> &paramNames,
                                                     const DataParallelExecutorGroup *shared)
    : contexts_(contexts), paramNames_(paramNames) {
  if (contexts.empty() || workLoad.size() != contexts.size())
    throw Error("AssertionError", "Invalid settings for work load. ");
  for (const auto &[name, shape] : inputShapes) {
    inputNames_.push_back(name);
    if (shape.empty())
      throw Error("ValueError", "input '" + name + "' has no batch dim");
    if (batchSize_ && shape[0] != batchSize_)
      throw Error("AssertionError", "all data must have the same batch size: batch_size = " +
                                        std::to_string(batchSize_) + ", but " + name + " has shape " +
                                        shapeToString(shape));
    batchSize_ = shape[0];
  }
  slices_ = splitInputSlice(batchSize_, workLoad);
  std::map<std::string, std::string> gradReq;
  for (const TensorSpec &spec : artifact->manifest().arguments)
    gradReq[spec.name] = std::count(paramNames.begin(), paramNames.end(), spec.name) ? "write" : "null";
  for (const std::string &name : paramNames)
    if (!gradReq.count(name))
      throw Error("ValueError", "param '" + name + "' is not an argument of the artifact");
  if (shared && shared->execs_.size() != contexts.size())
    throw Error("ValueError", "the shared executor group has " + std::to_string(shared->execs_.size()) +
                                  " executors, not " + std::to_string(contexts.size()));
  for (size_t i = 0; i < contexts.size(); ++i) {
    SharedMemory memory;
    if (shared) {
      memory.exec = shared->execs_[i].get();
      memory.argNames = paramNames;
    }
    execs_.push_back(std::make_shared<Executor>(
        Executor::simpleBind(artifact, contexts[i], sliceShapes(inputShapes, slices_[i]), gradReq, {}, memory)));
  }
}

void DataParallelExecutorGroup::onEachExecutor(const std::function<void(size_t)> &work) {
  std::vector<std::exception_ptr> errors(execs_.size());
  auto guarded = [&](size_t i) {
    try {
      work(i);
    } catch (...) {
      errors[i] = std::current_exception();
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 1; i < execs_.size(); ++i)
    threads.emplace_back(guarded, i);
  guarded(0);
  for (std::thread &t : threads)
    t.join();
  for (const std::exception_ptr &error : errors)
    if (error)
      std::rethrow_exception(error);
}

void DataParallelExecutorGroup::loadDataBatch(const ArrayDict &batch) {
  for (const std::string &name : inputNames_) {
    auto src = batch.find(name);
    if (src == batch.end())
      throw Error("KeyError", "the batch has no array '" + name + "'");
    const NDArray whole = src->second.toHost();
    if (whole.shape().empty() || whole.shape()[0] != batchSize_)
      throw Error("AssertionError", "Batch size miss match. Expected " + std::to_string(batchSize_) + ", got " +
                                        std::to_string(whole.shape().empty() ? 0 : whole.shape()[0]));
    size_t rowBytes = whole.nbytes() / static_cast<size_t>(batchSize_);
    for (size_t i = 0; i < execs_.size(); ++i) {
      NDArray dst = execs_[i]->argMap().at(name);
      std::vector<int64_t> rows = whole.shape();
      rows[0] = slices_[i].size();
      NDArray part = NDArray::wrap(static_cast<char *>(whole.data()) + slices_[i].begin * rowBytes, rows,
                                   whole.dtype());
      dst.copyFrom(part, name);
    }
  }
}

void DataParallelExecutorGroup::forward(bool isTrain) {
  int share = std::max(1, (numThreads_ ? numThreads_ : static_cast<int>(std::thread::hardware_concurrency())) /
                              static_cast<int>(execs_.size()));
  onEachExecutor([&](size_t i) {
    execs_[i]->setNumThreads(share);
    execs_[i]->forward(isTrain);
  });
}

void DataParallelExecutorGroup::backward() {
  onEachExecutor([&](size_t i) { execs_[i]->backward(); });
}

KVStoreType parseKVStoreType(const std::string &name) {
  if (name == "local")
    return KVStoreType::Local;
  if (name == "device")
    return KVStoreType::Device;
  if (name == "nccl")
    return KVStoreType::Nccl;
  throw Error("ValueError", "Unknown KVStore type " + name + ": an executor group sums with 'local', 'device' or 'nccl'");
}

std::vector<std::vector<NDArray>> DataParallelExecutorGroup::gradArrays() const {
  std::vector<std::vector<NDArray>> gradients;
  for (const std::string &name : paramNames_) {
    std::vector<NDArray> perExec;
    for (const auto &exec : execs_)
      if (NDArray g = exec->gradMap().at(name); !g.isNone())
        perExec.push_back(g);
    if (perExec.empty())
      continue;
    DType dtype = perExec.front().dtype();
    if (dtype != DType::Float32 && dtype != DType::Float64)
      throw Error("MXNetError", "gradient aggregation of '" + name + "': float32 and float64 only, not " +
                                    dtypeName(dtype));
    gradients.push_back(std::move(perExec));
  }
  return gradients;
}

const DeviceCollective *DataParallelExecutorGroup::collective(KVStoreType type) {
  if (type == KVStoreType::Local || (type == KVStoreType::Device && collectiveUnavailable_))
    return nullptr;
  if (!collective_) {
    try {
      collective_ = std::make_shared<DeviceCollective>(contexts_);
    } catch (const Error &) {
      if (type == KVStoreType::Nccl)
        throw;
      collectiveUnavailable_ = true; // 'device' sums as 'local' does
    }
  }
  return collective_.get();
}

void DataParallelExecutorGroup::sumOnHost(const std::vector<std::vector<NDArray>> &gradients) {
  size_t parts = execs_.size();
  onEachExecutor([&](size_t part) {
    for (const std::vector<NDArray> &arrays : gradients) {
      size_t n = arrays.front().size(), begin = n * part / parts, end = n * (part + 1) / parts;
      if (arrays.front().dtype() == DType::Float32)
        sumInto<float>(arrays, begin, end);
      else
        sumInto<double>(arrays, begin, end);
    }
  });
}

void DataParallelExecutorGroup::aggregateGradients(KVStoreType type) {
  if (execs_.size() < 2 && type != KVStoreType::Nccl)
    return;
  std::vector<std::vector<NDArray>> gradients = gradArrays();
  if (const DeviceCollective *gpus = collective(type))
    return gpus->allReduceSum(gradients, kInProcessTimeoutSeconds);
  // Arrays on a GPU are summed through host copies; host arrays in place
  // (toHost is the array itself, copying it onto itself a no-op).
  std::vector<std::vector<NDArray>> staged;
  for (const std::vector<NDArray> &arrays : gradients) {
    staged.emplace_back();
    for (const NDArray &array : arrays)
      staged.back().push_back(array.toHost());
  }
  sumOnHost(staged);
  for (size_t p = 0; p < gradients.size(); ++p)
    for (size_t e = 0; e < gradients[p].size(); ++e)
      gradients[p][e].copyFrom(staged[p][e]);
}

void DataParallelExecutorGroup::update(SGD &sgd) {
  onEachExecutor([&](size_t device) {
    ArrayDict args = execs_[device]->argMap(), grads = execs_[device]->gradMap();
    for (size_t p = 0; p < paramNames_.size(); ++p) {
      const std::string &name = paramNames_[p];
      if (!grads.at(name).isNone())
        sgd.update(static_cast<int>(p * execs_.size() + device), name, args.at(name), grads.at(name));
    }
  });
}

void DataParallelExecutorGroup::setParams(const ArrayDict &args, const ArrayDict &aux, bool allowExtra) {
  for (const auto &exec : execs_)
    exec->copyParamsFrom(args, aux, allowExtra);
}

void DataParallelExecutorGroup::copyTo(ArrayDict &args, ArrayDict &aux) const {
  auto average = [&](const std::string &name, ArrayDict (Executor::*map)() const, ArrayDict &out) {
    std::vector<NDArray> perExec;
    for (const auto &exec : execs_)
      perExec.push_back(((*exec).*map)().at(name));
    storeInto(out, name, mean(perExec));
  };
  for (const std::string &name : paramNames_)
    average(name, &Executor::argMap, args);
  for (const std::string &name : execs_.front()->listAuxiliaryStates())
    average(name, &Executor::auxMap, aux);
}

DataParallelExecutorManager::DataParallelExecutorManager(std::shared_ptr<const Artifact> artifact,
                                                         const std::vector<Context> &contexts,
                                                         const ShapeDict &inputShapes,
                                                         const std::vector<std::string> &paramNames,
                                                         std::vector<double> workLoad, BucketArtifacts symGen,
                                                         std::string defaultBucketKey)
    : contexts_(contexts), workLoad_(std::move(workLoad)), paramNames_(paramNames), symGen_(std::move(symGen)),
      defaultKey_(std::move(defaultBucketKey)) {
  if (workLoad_.empty())
    workLoad_.assign(contexts.size(), 1.0);
  current_ = std::make_shared<DataParallelExecutorGroup>(std::move(artifact), contexts_, workLoad_, inputShapes,
                                                         paramNames_);
  slices_ = current_->slices();
  groups_[defaultKey_] = current_;
}

void DataParallelExecutorManager::loadDataBatch(const ArrayDict &batch, const std::string &bucketKey,
                                                const ShapeDict &bucketShapes) {
  auto it = groups_.find(bucketKey);
  if (it == groups_.end()) {
    if (!symGen_)
      throw Error("KeyError", "no bucket '" + bucketKey + "': the manager has no sym_gen");
    // Each device keeps its slice of the default batch, as MXNet's groups do.
    std::vector<double> sizes;
    for (const BatchSlice &slice : slices_)
      sizes.push_back(static_cast<double>(slice.size()));
    it = groups_.emplace(bucketKey, std::make_shared<DataParallelExecutorGroup>(symGen_(bucketKey), contexts_, sizes,
                                                                               bucketShapes, paramNames_,
                                                                               defaultGroup().get()))
             .first;
  }
  current_ = it->second;
  current_->loadDataBatch(batch);
}

} // namespace symc
