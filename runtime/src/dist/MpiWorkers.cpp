//===- MpiWorkers.cpp - data-parallel training across processes (MPI) ----===//
#include "symc/Distributed.h"

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

/// Waits for a collective, polling; past `timeout` seconds (another rank
/// died or stalled) it ends the whole job with MPI_Abort, which mpirun
/// reports, rather than wait forever.
void wait(MPI_Request &request, const char *what, int rank, int timeout) {
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout);
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done)
      return;
    if (std::chrono::steady_clock::now() > deadline) {
      std::fprintf(stderr,
                   "symc: rank %d: %s did not complete within %d s (SYMC_MPI_TIMEOUT): another rank died or "
                   "stalled; ending the job\n",
                   rank, what, timeout);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
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

/// Every device's gradient of every parameter, device 0's first.
std::vector<std::vector<NDArray>> gradients(const DataParallelExecutorGroup &group) {
  std::vector<std::vector<NDArray>> all;
  for (const std::string &name : group.paramNames()) {
    std::vector<NDArray> perDevice;
    for (const auto &exec : group.executors())
      if (NDArray g = exec->gradMap().at(name); !g.isNone())
        perDevice.push_back(g);
    if (!perDevice.empty()) {
      if (perDevice.front().dtype() != DType::Float32)
        throw Error("MXNetError", "MPI all-reduce of '" + name + "': float32 gradients only");
      all.push_back(std::move(perDevice));
    }
  }
  return all;
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

void MpiWorkers::broadcastParams(DataParallelExecutorGroup &group) const {
  const auto &execs = group.executors();
  auto broadcast = [&](ArrayDict (Executor::*map)() const, const std::vector<std::string> &names) {
    for (const std::string &name : names) {
      NDArray first = ((*execs.front()).*map)().at(name);
      for (size_t done = 0; done < first.nbytes();) {
        int count = static_cast<int>(std::min<size_t>(first.nbytes() - done, INT_MAX));
        MPI_Request request;
        check(MPI_Ibcast(static_cast<char *>(first.data()) + done, count, MPI_BYTE, 0, MPI_COMM_WORLD, &request),
              "MPI_Ibcast");
        wait(request, "the broadcast of the parameters", rank_, timeout_);
        done += static_cast<size_t>(count);
      }
      for (size_t i = 1; i < execs.size(); ++i)
        ((*execs[i]).*map)().at(name).copyFrom(first, name);
    }
  };
  broadcast(&Executor::argMap, group.paramNames());
  broadcast(&Executor::auxMap, execs.front()->listAuxiliaryStates());
}

void MpiWorkers::allReduceGradients(DataParallelExecutorGroup &group, size_t bucketBytes) const {
  if (size_ == 1)
    return;
  std::vector<std::vector<NDArray>> grads = gradients(group);
  size_t bucketFloats = std::max<size_t>(1, bucketBytes / sizeof(float));
  std::vector<float> bucket;
  // Packs whole gradients into a bucket, sums it over the workers, and
  // writes the sums into every device's gradient.
  size_t next = 0;
  while (next < grads.size()) {
    size_t first = next, floats = 0;
    while (next < grads.size() && (next == first || floats + grads[next].front().size() <= bucketFloats))
      floats += grads[next++].front().size();
    bucket.resize(floats);
    size_t at = 0;
    for (size_t p = first; p < next; ++p) {
      const NDArray &g = grads[p].front();
      std::memcpy(bucket.data() + at, g.data(), g.nbytes());
      at += g.size();
    }
    for (size_t done = 0; done < floats;) {
      int count = static_cast<int>(std::min<size_t>(floats - done, INT_MAX));
      MPI_Request request;
      check(MPI_Iallreduce(MPI_IN_PLACE, bucket.data() + done, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request),
            "MPI_Iallreduce");
      wait(request, "the gradient all-reduce", rank_, timeout_);
      done += static_cast<size_t>(count);
    }
    at = 0;
    for (size_t p = first; p < next; ++p) {
      for (const NDArray &g : grads[p])
        std::memcpy(g.data(), bucket.data() + at, g.nbytes());
      at += grads[p].front().size();
    }
  }
}

} // namespace symc
