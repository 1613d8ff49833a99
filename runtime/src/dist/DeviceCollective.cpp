//===- DeviceCollective.cpp - gradient all-reduce across GPUs -------------===//
#include "DeviceCollective.h"

#include "../core/Device.h"

#include <algorithm>

namespace symc {

std::string DeviceCollective::newId() {
  std::string id(kIdBytes, '\0');
  checkDevice(cudaDevice().collectiveId(id.data()), "making an NCCL communicator");
  return id;
}

std::vector<Context> DeviceCollective::checked(std::vector<Context> devices) {
  for (size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].devType != Context::kGPU)
      throw Error("MXNetError", "NCCL sums arrays on GPUs, not on " + devices[i].str());
    if (std::find(devices.begin(), devices.begin() + i, devices[i]) != devices.begin() + i)
      throw Error("MXNetError", "NCCL needs one GPU per rank: " + devices[i].str() + " is given twice");
  }
  return devices;
}

DeviceCollective::DeviceCollective(std::vector<Context> devices, const std::string &id, int ranks, int firstRank)
    : devices_(checked(std::move(devices))) {
  join(id, ranks, firstRank);
}

DeviceCollective::DeviceCollective(std::vector<Context> devices) : devices_(checked(std::move(devices))) {
  join(newId(), static_cast<int>(devices_.size()), 0);
}

void DeviceCollective::join(const std::string &id, int ranks, int firstRank) {
  if (id.size() != kIdBytes)
    throw Error("MXNetError", "an NCCL communicator id has " + std::to_string(kIdBytes) + " bytes, not " +
                                  std::to_string(id.size()));
  std::vector<int> ids;
  for (const Context &ctx : devices_)
    ids.push_back(ctx.devId);
  comms_.resize(devices_.size());
  checkDevice(cudaDevice().collectiveJoin(id.data(), ranks, firstRank, static_cast<int>(ids.size()), ids.data(),
                                          comms_.data()),
              "joining an NCCL communicator of " + std::to_string(ranks) + " ranks");
}

DeviceCollective::~DeviceCollective() {
  for (void *comm : comms_)
    cudaDevice().collectiveLeave(comm);
}

void DeviceCollective::allReduceSum(const std::vector<std::vector<NDArray>> &arrays, int timeoutSeconds) const {
  if (arrays.empty())
    return;
  size_t ranks = devices_.size();
  std::vector<void *> buffers(ranks * arrays.size());
  std::vector<size_t> elements;
  std::vector<int> isDouble;
  for (size_t p = 0; p < arrays.size(); ++p) {
    const NDArray &first = arrays[p].front();
    if (arrays[p].size() != ranks)
      throw Error("MXNetError", "an all-reduce over " + std::to_string(ranks) + " GPUs was given " +
                                    std::to_string(arrays[p].size()) + " arrays");
    if (first.dtype() != DType::Float32 && first.dtype() != DType::Float64)
      throw Error("MXNetError", std::string("NCCL sums float32 and float64 arrays, not ") + dtypeName(first.dtype()));
    for (size_t r = 0; r < ranks; ++r) {
      const NDArray &array = arrays[p][r];
      if (array.context() != devices_[r] || array.shape() != first.shape() || array.dtype() != first.dtype())
        throw Error("MXNetError", "the all-reduce's array " + std::to_string(p) + " on rank " + std::to_string(r) +
                                      " is not a " + shapeToString(first.shape()) + " array on " +
                                      devices_[r].str());
      buffers[r * arrays.size() + p] = array.data();
    }
    elements.push_back(first.size());
    isDouble.push_back(first.dtype() == DType::Float64);
  }
  checkDevice(cudaDevice().allReduceSum(static_cast<int>(ranks), comms_.data(), static_cast<int>(arrays.size()),
                                        buffers.data(), elements.data(), isDouble.data(), timeoutSeconds),
              "summing the gradients over the GPUs");
}

} // namespace symc
