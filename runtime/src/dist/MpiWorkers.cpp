//===- MpiWorkers.cpp - data-parallel training across processes (MPI) ----===//
#include "symc/Distributed.h"

#include "DeviceCollective.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace symc {
namespace {

void check(int status, const char *call) {
  if (status == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error("MXNetError", std::string(call) + " failed: " + std::string(text, length));
}

/// Prints `what` and ends the job: a rank that fails or stops answering
/// must not leave the others waiting.
[[noreturn]] void abortJob(int rank, const std::string &what) {
  std::fprintf(stderr, "symc: rank %d: %s; ending the job\n", rank, what.c_str());
  MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort(); // MPI_Abort does not return
}

/// Waits for a collective, polling; past `timeout` seconds (another rank
/// died or stalled) it ends the whole job with MPI_Abort, which mpirun
/// reports, rather than wait forever. Open MPI moves a large message's
/// segments only inside MPI_Test: the first second polls without pause
/// (a pause there halved the all-reduce's throughput), later ones sleep
/// between polls, as a wait for a slow or dead rank.
void wait(MPI_Request &request, const char *what, int rank, int timeout) {
  auto start = std::chrono::steady_clock::now();
  auto busyUntil = start + std::chrono::seconds(1), deadline = start + std::chrono::seconds(timeout);
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done)
      return;
    auto now = std::chrono::steady_clock::now();
    if (now > deadline)
      abortJob(rank, std::string(what) + " did not complete within " + std::to_string(timeout) +
                         " s (SYMC_MPI_TIMEOUT): another rank died or stalled");
    if (now > busyUntil)
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    else
      std::this_thread::yield();
  }
}

/// SYMC_MPI_TIMEOUT, in seconds (600 by default).
int timeoutSeconds() {
  const char *text = std::getenv("SYMC_MPI_TIMEOUT");
  int seconds = text ? std::atoi(text) : 0;
  return seconds > 0 ? seconds : 600;
}

void finalize() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

} // namespace

MpiWorkers::MpiWorkers() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    std::atexit(finalize);
  }
  // Errors come back as codes (then symc::Error), not as an abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
  timeout_ = timeoutSeconds();
}

MpiWorkers &MpiWorkers::get() {
  static MpiWorkers workers;
  return workers;
}

void MpiWorkers::checkSame(const std::string &what, const std::string &digest) const {
  std::vector<char> mine(64, '\0');
  std::memcpy(mine.data(), digest.data(), std::min<size_t>(digest.size(), mine.size()));
  std::vector<char> all(mine.size() * static_cast<size_t>(size_));
  MPI_Request request;
  check(MPI_Iallgather(mine.data(), static_cast<int>(mine.size()), MPI_CHAR, all.data(),
                       static_cast<int>(mine.size()), MPI_CHAR, MPI_COMM_WORLD, &request),
        "MPI_Iallgather");
  wait(request, "the check of the workers' models", rank_, timeout_);
  std::string differing;
  for (int r = 1; r < size_; ++r)
    if (std::memcmp(all.data(), all.data() + r * mine.size(), mine.size()) != 0)
      differing += (differing.empty() ? "" : ", ") + std::to_string(r);
  if (!differing.empty())
    throw Error("MXNetError", "the workers differ in " + what + ": rank(s) " + differing + " differ from rank 0");
}

/// The workers live until the process exits, when the CUDA driver may
/// already be shut down: the job's NCCL communicators are left to the
/// process's end rather than destroyed through it.
MpiWorkers::~MpiWorkers() {
  for (auto &[device, collective] : collectives_)
    (void)collective.release();
}

void MpiWorkers::broadcast(void *data, size_t bytes, const char *what) const {
  for (size_t done = 0; done < bytes;) {
    int count = static_cast<int>(std::min<size_t>(bytes - done, INT_MAX));
    MPI_Request request;
    check(MPI_Ibcast(static_cast<char *>(data) + done, count, MPI_BYTE, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
    wait(request, what, rank_, timeout_);
    done += static_cast<size_t>(count);
  }
}

void MpiWorkers::broadcastParams(DataParallelExecutorGroup &group) const {
  const auto &execs = group.executors();
  auto broadcastEach = [&](ArrayDict (Executor::*map)() const, const std::vector<std::string> &names) {
    for (const std::string &name : names) {
      NDArray first = ((*execs.front()).*map)().at(name);
      NDArray host = first.toHost(); // MPI moves host memory
      broadcast(host.data(), host.nbytes(), "the broadcast of the parameters");
      for (const auto &exec : execs)
        ((*exec).*map)().at(name).copyFrom(host, name);
    }
  };
  broadcastEach(&Executor::argMap, group.paramNames());
  broadcastEach(&Executor::auxMap, execs.front()->listAuxiliaryStates());
}

void MpiWorkers::allReduceGradients(DataParallelExecutorGroup &group, KVStoreType type, size_t bucketBytes) {
  if (size_ == 1)
    return;
  std::vector<std::vector<NDArray>> gradients = group.gradArrays();
  for (const std::vector<NDArray> &arrays : gradients)
    if (arrays.front().dtype() != DType::Float32)
      throw Error("MXNetError", "the workers' all-reduce sums float32 gradients only, not " +
                                    std::string(dtypeName(arrays.front().dtype())));
  if (type == KVStoreType::Local)
    allReduceOnHost(gradients, bucketBytes);
  else
    allReduceOnGpus(gradients);
}

void MpiWorkers::sumInPlace(float *data, size_t floats) const {
  for (size_t done = 0; done < floats;) {
    int count = static_cast<int>(std::min<size_t>(floats - done, INT_MAX));
    MPI_Request request;
    check(MPI_Iallreduce(MPI_IN_PLACE, data + done, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
    wait(request, "the gradient all-reduce", rank_, timeout_);
    done += static_cast<size_t>(count);
  }
}

void MpiWorkers::allReduceOnHost(const std::vector<std::vector<NDArray>> &grads, size_t bucketBytes) const {
  size_t bucketFloats = std::max<size_t>(1, bucketBytes / sizeof(float));
  // A gradient of a quarter bucket or more in host memory is summed where
  // it lies (packing it would copy it twice for little saved latency); the
  // smaller ones are packed into buckets. Every worker takes the same path:
  // they run the same artifact.
  std::vector<const std::vector<NDArray> *> packable;
  for (const std::vector<NDArray> &arrays : grads) {
    const NDArray &first = arrays.front();
    if (first.onDevice() || first.size() * 4 < bucketFloats) {
      packable.push_back(&arrays);
      continue;
    }
    sumInPlace(first.data<float>(), first.size());
    for (NDArray other : std::vector<NDArray>(arrays.begin() + 1, arrays.end()))
      other.copyFrom(first);
  }
  std::vector<float> bucket;
  size_t next = 0;
  while (next < packable.size()) {
    size_t first = next, floats = 0;
    while (next < packable.size() && (next == first || floats + packable[next]->front().size() <= bucketFloats))
      floats += packable[next++]->front().size();
    bucket.resize(floats);
    std::vector<NDArray> packed; // each gradient's part of the bucket
    for (size_t p = first, at = 0; p < next; at += packable[p++]->front().size()) {
      packed.push_back(NDArray::wrap(bucket.data() + at, packable[p]->front().shape(), DType::Float32));
      packed.back().copyFrom(packable[p]->front());
    }
    sumInPlace(bucket.data(), floats);
    for (size_t p = first; p < next; ++p)
      for (NDArray g : *packable[p])
        g.copyFrom(packed[p - first]);
  }
}

void MpiWorkers::allReduceOnGpus(const std::vector<std::vector<NDArray>> &grads) {
  if (grads.empty())
    return;
  Context device = grads.front().front().context();
  if (device.devType != Context::kGPU)
    throw Error("MXNetError", "kvstore dist_sync_device sums gradients on GPUs; this worker's are on " + device.str());
  auto &collective = collectives_[device.devId];
  // A rank that cannot make or join the communicator would leave the others
  // waiting in NCCL: it ends the job instead.
  if (!collective) {
    std::string id(DeviceCollective::kIdBytes, '\0');
    try {
      if (rank_ == 0)
        id = DeviceCollective::newId();
    } catch (const Error &error) {
      abortJob(rank_, error.what());
    }
    broadcast(id.data(), id.size(), "the NCCL communicator's id");
    try {
      collective = std::make_unique<DeviceCollective>(std::vector<Context>{device}, id, size_, rank_);
    } catch (const Error &error) {
      abortJob(rank_, error.what());
    }
  }
  std::vector<std::vector<NDArray>> firstDevice;
  for (const std::vector<NDArray> &arrays : grads)
    firstDevice.push_back({arrays.front()});
  try {
    collective->allReduceSum(firstDevice, timeout_);
  } catch (const Error &error) {
    abortJob(rank_, error.what());
  }
  for (const std::vector<NDArray> &arrays : grads)
    for (NDArray other : std::vector<NDArray>(arrays.begin() + 1, arrays.end()))
      other.copyFrom(arrays.front());
}

} // namespace symc
