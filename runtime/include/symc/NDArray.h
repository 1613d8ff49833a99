//===- NDArray.h - dense arrays (host or GPU) with shared storage *- C++ -*-===//
#ifndef SYMC_RUNTIME_NDARRAY_H
#define SYMC_RUNTIME_NDARRAY_H

#include "symc/Params.h"

#include <atomic>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace symc {

/// The exception every runtime check throws. `kind` is the Python exception
/// MXNet raises for the same check ("ValueError", "TypeError", "MXNetError").
class Error : public std::runtime_error {
public:
  Error(std::string kind, const std::string &message)
      : std::runtime_error(message), kind_(std::move(kind)) {}
  const std::string &kind() const { return kind_; }

private:
  std::string kind_;
};

struct Context {
  enum DeviceType : int { kCPU = 1, kGPU = 2 };
  DeviceType devType = kCPU;
  int devId = 0;

  static Context cpu(int id = 0) { return {kCPU, id}; }
  static Context gpu(int id = 0) { return {kGPU, id}; }
  /// MXNet's rendering: cpu(0), gpu(1).
  std::string str() const;
  bool operator==(const Context &o) const { return devType == o.devType && devId == o.devId; }
  bool operator!=(const Context &o) const { return !(*this == o); }
};

/// A dense array. Copies of an NDArray share its storage (as MXNet's handles
/// do); Copy() makes an independent one.
class NDArray {
public:
  /// A "none" array: no shape, no storage.
  NDArray() = default;
  /// A zero-filled array.
  NDArray(std::vector<int64_t> shape, DType dtype = DType::Float32, Context ctx = Context::cpu());
  static NDArray fromData(std::vector<int64_t> shape, DType dtype, const void *data);
  /// An array over memory it does not own (no copy); `release` runs when the
  /// last reference goes (none: the owner outlives every reference).
  static NDArray wrap(void *data, std::vector<int64_t> shape, DType dtype,
                      std::function<void(void *)> release = nullptr);

  bool isNone() const { return !storage_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Context context() const { return ctx_; }
  /// Whether the storage is a GPU's: data() is then a device pointer.
  bool onDevice() const { return ctx_.devType == Context::kGPU; }
  size_t size() const;
  size_t nbytes() const { return size() * dtypeSize(dtype_); }
  /// The storage. Fetching it counts as a write (version()), since the
  /// caller may write through it.
  void *data() const;
  /// How many times the storage was fetched for writing, counted across
  /// views of it: an executor recomputes its prepared arrays (packed
  /// weights) from an input whose version changed since it prepared them.
  /// Memory the array does not own (wrap) may be written unseen: each call
  /// then gives a new version.
  uint64_t version() const;
  template <typename T> T *data() const { return static_cast<T *>(data()); }

  /// A view of the same storage with another shape of the same size.
  NDArray reshape(std::vector<int64_t> shape) const;
  /// A view of the first elements of the storage with a shape no larger
  /// (MXNet's NDArray::Reshape, as executor reshape shares memory).
  NDArray viewPrefix(std::vector<int64_t> shape) const;
  /// Copies `src` (same shape) into this array, converting the dtype. A
  /// shape mismatch is an error naming `name` (what this array is) if given.
  void copyFrom(const NDArray &src, const std::string &name = "");
  /// this += src, elementwise (grad_req 'add').
  void addFrom(const NDArray &src, const std::string &name = "");
  /// Sets every element to `value`.
  void fill(double value);
  NDArray copy() const;
  /// The array in host memory: itself on the CPU, a copy from a GPU.
  NDArray toHost() const;
  bool sharesStorageWith(const NDArray &other) const { return storage_ == other.storage_; }

private:
  void copyAcrossDevices(const NDArray &src);

  std::vector<int64_t> shape_;
  DType dtype_ = DType::Float32;
  Context ctx_;
  std::shared_ptr<uint8_t> storage_;
  std::shared_ptr<std::atomic<uint64_t>> writes_;
  bool wrapped_ = false;
};

} // namespace symc

#endif
