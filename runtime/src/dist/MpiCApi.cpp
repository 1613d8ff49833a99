//===- MpiCApi.cpp - libsymrt_mpi's C API ---------------------------------===//
#include "symc/c_api_mpi.h"

#include "../core/CApiInternal.h"
#include "symc/Distributed.h"

using symc::MpiWorkers;
using symc::capi::executorGroup;
using symc::capi::runGuarded;

extern "C" {

int SymcMpiInit(int *rank, int *size) {
  return runGuarded([&] {
    MpiWorkers &workers = MpiWorkers::get();
    if (rank)
      *rank = workers.rank();
    if (size)
      *size = workers.size();
  });
}

int SymcMpiCheckSame(const char *what, const char *digest) {
  return runGuarded([&] {
    if (!what || !digest)
      throw symc::Error("ValueError", "null name or digest");
    MpiWorkers::get().checkSame(what, digest);
  });
}

int SymcMpiBroadcastParams(SymcExecutorGroupHandle group) {
  return runGuarded([&] { MpiWorkers::get().broadcastParams(executorGroup(group)); });
}

int SymcMpiAllReduceGradients(SymcExecutorGroupHandle group) {
  return runGuarded([&] { MpiWorkers::get().allReduceGradients(executorGroup(group)); });
}

int SymcMpiAllReduceGradientsEx(SymcExecutorGroupHandle group, const char *kvstore) {
  return runGuarded([&] {
    std::string type = kvstore ? kvstore : "";
    if (type != "dist_sync" && type != "dist_sync_device")
      throw symc::Error("ValueError", "Unknown KVStore type " + type + ": workers sum with 'dist_sync' or "
                                      "'dist_sync_device'");
    MpiWorkers::get().allReduceGradients(executorGroup(group), type == "dist_sync" ? symc::KVStoreType::Local
                                                                                  : symc::KVStoreType::Device);
  });
}

} // extern "C"
