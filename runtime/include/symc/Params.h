//===- Params.h - MXNet's .params (NDArray list) format ---------*- C++ -*-===//
//
// Byte-compatible with MXNet 1.9 (src/ndarray/ndarray.cc): writes V2 files,
// reads V1, V2, V3 and the pre-V1 legacy layout. Dense arrays only; sparse
// arrays are rejected with a clear error. Errors name the byte offset.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_RUNTIME_PARAMS_H
#define SYMC_RUNTIME_PARAMS_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace symc {

/// MXNet's dtype codes (mshadow TypeFlag).
enum class DType : int32_t {
  Float32 = 0, Float64 = 1, Float16 = 2, UInt8 = 3, Int32 = 4, Int8 = 5, Int64 = 6,
  Bool = 7, Int16 = 8, UInt16 = 9, UInt32 = 10, UInt64 = 11, BFloat16 = 12,
};

bool isValidDType(int32_t code);
size_t dtypeSize(DType dtype);
/// numpy's name for the dtype ("float32").
const char *dtypeName(DType dtype);
/// The reverse of dtypeName; false for an unknown name.
bool dtypeFromName(const std::string &name, DType &dtype);

/// Python's tuple rendering, as MXNet error messages print shapes: (2, 3), (3,).
std::string shapeToString(const std::vector<int64_t> &shape);

/// The bytes an array of `shape` takes with elements of `elementSize` bytes;
/// nullopt when a dim is negative or the size exceeds what memory can
/// address. Every reader and constructor of arrays sizes them through this,
/// before it allocates.
std::optional<size_t> arrayByteSize(const std::vector<int64_t> &shape, size_t elementSize);

struct NDArrayRecord {
  /// As stored: "arg:fc1_weight", "aux:bn_moving_mean", or a bare name.
  std::string name;
  std::vector<int64_t> shape;
  DType dtype = DType::Float32;
  /// The context it was saved from (1 = cpu, 2 = gpu); data is always host.
  int32_t devType = 1, devId = 0;
  std::vector<uint8_t> data;
  /// A "none" array (no shape, no data), as MXNet saves an empty NDArray.
  bool isNone = false;
};

struct ParamsFile {
  std::vector<NDArrayRecord> arrays;
  /// False for a list saved without names (mx.nd.save of a list).
  bool named = true;
};

/// Parses `size` bytes. On failure returns false and sets `error`
/// ("byte 24: ..."); `out` is then unspecified.
bool parseParams(const uint8_t *bytes, size_t size, ParamsFile &out, std::string &error);
/// Reads `path`; where PATH.sha256 exists (saveParams writes one; `sha256sum
/// F > F.sha256` makes one for MXNet's files) the bytes must match it.
bool loadParams(const std::string &path, ParamsFile &out, std::string &error);

/// MXNet's V2 layout (V3 for 0-d arrays, as MXNet saves them under np-shape).
std::vector<uint8_t> serializeParams(const ParamsFile &file);
/// Writes `path` and PATH.sha256 (sha256sum's format) beside it.
bool saveParams(const std::string &path, const ParamsFile &file, std::string &error);

} // namespace symc

#endif
