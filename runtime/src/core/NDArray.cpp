//===- NDArray.cpp - dense host arrays with shared storage ----------------===//
#include "symc/NDArray.h"

#include "Device.h"

#include <cstdlib>
#include <cstring>
#include <sys/mman.h>

namespace symc {

std::string Context::str() const {
  return std::string(devType == kGPU ? "gpu(" : "cpu(") + std::to_string(devId) + ")";
}

static size_t product(const std::vector<int64_t> &shape) {
  size_t n = 1;
  for (int64_t d : shape)
    n *= static_cast<size_t>(d);
  return n;
}

/// Refuses a shape whose size cannot exist, before anything is allocated.
static void checkShape(const std::vector<int64_t> &shape, DType dtype) {
  if (!arrayByteSize(shape, dtypeSize(dtype)))
    throw Error("MXNetError", "invalid array shape " + shapeToString(shape) + " of " + dtypeName(dtype) +
                                  ": a dim is negative or the array exceeds 2^62 bytes");
}

/// Arrays of a huge page or more start on one and ask the kernel for huge
/// pages (transparent huge pages, which Debian's kernels give to memory
/// that asks): a training step's workspace spans hundreds of MiB, whose
/// 4 KiB pages each layer's loops walked through the TLB.
constexpr size_t kHugePageBytes = size_t(2) << 20;

// 64-byte alignment lets generated vector code use aligned loads.
static std::shared_ptr<uint8_t> allocateZeroed(size_t bytes) {
  size_t alignment = bytes >= kHugePageBytes ? kHugePageBytes : 64;
  size_t rounded = (bytes + 63) / 64 * 64; // (not to whole huge pages: the tail stays on 4 KiB ones)
  void *p = nullptr;
  if (posix_memalign(&p, alignment, rounded ? rounded : 64) != 0)
    throw Error("MXNetError", "out of memory allocating " + std::to_string(bytes) + " bytes");
#ifdef MADV_HUGEPAGE
  if (alignment == kHugePageBytes)
    (void)madvise(p, rounded, MADV_HUGEPAGE); // (a hint: where refused, 4 KiB pages serve)
#endif
  std::memset(p, 0, rounded);
  return std::shared_ptr<uint8_t>(static_cast<uint8_t *>(p), [](uint8_t *q) { std::free(q); });
}

NDArray::NDArray(std::vector<int64_t> shape, DType dtype, Context ctx)
    : shape_(std::move(shape)), dtype_(dtype), ctx_(ctx) {
  checkShape(shape_, dtype_);
  storage_ = onDevice() ? allocateOnDevice(ctx, nbytes()) : allocateZeroed(nbytes());
  writes_ = std::make_shared<std::atomic<uint64_t>>(0);
}

NDArray NDArray::fromData(std::vector<int64_t> shape, DType dtype, const void *data) {
  NDArray a(std::move(shape), dtype);
  if (a.nbytes() != 0)
    std::memcpy(a.data(), data, a.nbytes());
  return a;
}

NDArray NDArray::wrap(void *data, std::vector<int64_t> shape, DType dtype,
                      std::function<void(void *)> release) {
  if (!data) {
    NDArray empty(std::move(shape), dtype);
    if (empty.nbytes() > 0)
      throw Error("MXNetError", "cannot wrap a null pointer as an array of shape " +
                                    shapeToString(empty.shape_));
    return empty;
  }
  checkShape(shape, dtype);
  NDArray a;
  a.shape_ = std::move(shape);
  a.dtype_ = dtype;
  a.storage_ = std::shared_ptr<uint8_t>(static_cast<uint8_t *>(data), [release](uint8_t *p) {
    if (release)
      release(p);
  });
  a.writes_ = std::make_shared<std::atomic<uint64_t>>(0);
  a.wrapped_ = true;
  return a;
}

size_t NDArray::size() const { return product(shape_); }

void *NDArray::data() const {
  if (writes_)
    writes_->fetch_add(1, std::memory_order_relaxed);
  return storage_.get();
}

uint64_t NDArray::version() const {
  if (!writes_)
    return 0;
  return wrapped_ ? writes_->fetch_add(1, std::memory_order_relaxed) + 1 : writes_->load(std::memory_order_relaxed);
}

NDArray NDArray::reshape(std::vector<int64_t> shape) const {
  checkShape(shape, dtype_);
  if (product(shape) != size())
    throw Error("MXNetError", "cannot reshape array of shape " + shapeToString(shape_) +
                                  " into shape " + shapeToString(shape));
  NDArray view = *this;
  view.shape_ = std::move(shape);
  return view;
}

NDArray NDArray::viewPrefix(std::vector<int64_t> shape) const {
  checkShape(shape, dtype_);
  if (product(shape) > size())
    throw Error("MXNetError", "cannot view array of shape " + shapeToString(shape_) + " as the larger shape " +
                                  shapeToString(shape));
  NDArray view = *this;
  view.shape_ = std::move(shape);
  return view;
}

namespace {

// IEEE half and bfloat16 <-> float, round to nearest even.
float halfToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1F, mant = h & 0x3FF, bits;
  if (exp == 0x1F)
    bits = sign | 0x7F800000u | (mant << 13);
  else if (exp != 0)
    bits = sign | ((exp + 112) << 23) | (mant << 13);
  else if (mant == 0)
    bits = sign;
  else { // subnormal: renormalize
    exp = 113;
    while (!(mant & 0x400)) mant <<= 1, --exp;
    bits = sign | (exp << 23) | ((mant & 0x3FF) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000u, exp = (x >> 23) & 0xFF, mant = x & 0x7FFFFF;
  if (exp == 0xFF)
    return sign | 0x7C00u | (mant ? 0x200u : 0);
  int e = static_cast<int>(exp) - 112;
  if (e >= 0x1F)
    return sign | 0x7C00u;
  if (e <= 0) {
    if (e < -10)
      return sign;
    mant |= 0x800000u;
    uint32_t shift = 14 - e, half = mant >> shift, rest = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rest > mid || (rest == mid && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = (e << 10) | (mant >> 13), rest = mant & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half;
  return sign | half;
}

float bfloat16ToFloat(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t floatToBfloat16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7FFFFFFF) > 0x7F800000)
    return (x >> 16) | 0x40;
  return (x + 0x7FFF + ((x >> 16) & 1)) >> 16;
}

template <typename T> double load(const void *p, size_t i) {
  return static_cast<double>(static_cast<const T *>(p)[i]);
}
template <typename T> void store(void *p, size_t i, double v) { static_cast<T *>(p)[i] = static_cast<T>(v); }

double loadElement(DType t, const void *p, size_t i) {
  switch (t) {
  case DType::Float32: return load<float>(p, i);
  case DType::Float64: return load<double>(p, i);
  case DType::UInt8: return load<uint8_t>(p, i);
  case DType::Int8: return load<int8_t>(p, i);
  case DType::Int32: return load<int32_t>(p, i);
  case DType::Int64: return load<int64_t>(p, i);
  case DType::Bool: return load<bool>(p, i);
  case DType::Float16: return halfToFloat(static_cast<const uint16_t *>(p)[i]);
  case DType::BFloat16: return bfloat16ToFloat(static_cast<const uint16_t *>(p)[i]);
  default: throw Error("MXNetError", std::string("symc runtime: no conversion from ") + dtypeName(t));
  }
}

void storeElement(DType t, void *p, size_t i, double v) {
  switch (t) {
  case DType::Float32: return store<float>(p, i, v);
  case DType::Float64: return store<double>(p, i, v);
  case DType::UInt8: return store<uint8_t>(p, i, v);
  case DType::Int8: return store<int8_t>(p, i, v);
  case DType::Int32: return store<int32_t>(p, i, v);
  case DType::Int64: return store<int64_t>(p, i, v);
  case DType::Bool: return store<bool>(p, i, v != 0);
  case DType::Float16: static_cast<uint16_t *>(p)[i] = floatToHalf(static_cast<float>(v)); return;
  case DType::BFloat16: static_cast<uint16_t *>(p)[i] = floatToBfloat16(static_cast<float>(v)); return;
  default: throw Error("MXNetError", std::string("symc runtime: no conversion to ") + dtypeName(t));
  }
}

} // namespace

/// MXNet's text for a copy between shapes that differ, after `name` (the
/// argument or output copied into) where the caller knows it.
static void checkSameShape(const std::vector<int64_t> &from, const std::vector<int64_t> &to,
                           const std::string &name) {
  if (from != to)
    throw Error("MXNetError", (name.empty() ? "" : name + ": ") + "operands shape mismatch from.shape = " +
                                  shapeToString(from) + " to.shape = " + shapeToString(to));
}

void NDArray::copyFrom(const NDArray &src, const std::string &name) {
  checkSameShape(src.shape_, shape_, name);
  if (src.data() == data() && src.ctx_ == ctx_)
    return;
  if (onDevice() || src.onDevice())
    return copyAcrossDevices(src);
  if (src.dtype_ == dtype_) {
    if (nbytes() != 0) // a zero-size array may have no storage to copy from
      std::memcpy(data(), src.data(), nbytes());
    return;
  }
  for (size_t i = 0, n = size(); i < n; ++i)
    storeElement(dtype_, data(), i, loadElement(src.dtype_, src.data(), i));
}

NDArray NDArray::toHost() const {
  if (!onDevice())
    return *this;
  NDArray host(shape_, dtype_);
  checkDevice(cudaDevice().copyToHost(ctx_.devId, host.data(), data(), nbytes()), "copying from " + ctx_.str());
  return host;
}

/// A copy with a GPU on either side: the same dtype on one GPU stays there;
/// anything else goes through host memory (converting there).
void NDArray::copyAcrossDevices(const NDArray &src) {
  const SymcDeviceAPI &api = cudaDevice();
  if (src.ctx_ == ctx_ && src.dtype_ == dtype_) {
    checkDevice(api.copyOnDevice(ctx_.devId, data(), src.data(), nbytes()), "copying on " + ctx_.str());
    return;
  }
  NDArray from = src.toHost();
  if (!onDevice())
    return copyFrom(from);
  NDArray staged = from;
  if (from.dtype_ != dtype_) {
    staged = NDArray(shape_, dtype_);
    staged.copyFrom(from);
  }
  checkDevice(api.copyToDevice(ctx_.devId, data(), staged.data(), nbytes()), "copying to " + ctx_.str());
}

void NDArray::addFrom(const NDArray &src, const std::string &name) {
  checkSameShape(src.shape_, shape_, name);
  if (onDevice() || src.onDevice()) {
    NDArray sum = toHost().copy();
    sum.addFrom(src.toHost(), name);
    return copyFrom(sum);
  }
  if (dtype_ == DType::Float32 && src.dtype_ == DType::Float32) {
    float *to = data<float>();
    const float *from = src.data<float>();
    for (size_t i = 0, n = size(); i < n; ++i)
      to[i] += from[i];
    return;
  }
  for (size_t i = 0, n = size(); i < n; ++i)
    storeElement(dtype_, data(), i, loadElement(dtype_, data(), i) + loadElement(src.dtype_, src.data(), i));
}

void NDArray::fill(double value) {
  if (onDevice()) {
    NDArray filled(shape_, dtype_);
    filled.fill(value);
    return copyFrom(filled);
  }
  for (size_t i = 0, n = size(); i < n; ++i)
    storeElement(dtype_, data(), i, value);
}

NDArray NDArray::copy() const {
  NDArray out(shape_, dtype_, ctx_);
  out.copyFrom(*this);
  return out;
}

} // namespace symc
