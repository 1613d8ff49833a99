//===- Params.cpp - MXNet's .params (NDArray list) format -----------------===//
#include "symc/Params.h"
#include "symc/ArtifactABI.h"
#include "symc/ArtifactSeal.h"

#include "FileIO.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator> // std::size
#include <limits>

namespace symc {

namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993FAC8;
constexpr uint32_t kV2Magic = 0xF993FAC9;
constexpr uint32_t kV3Magic = 0xF993FACA;
constexpr int32_t kMaxDims = 32;

struct DTypeInfo {
  const char *name;
  size_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {"float32", 4}, {"float64", 8}, {"float16", 2}, {"uint8", 1},  {"int32", 4},
    {"int8", 1},    {"int64", 8},   {"bool", 1},    {"int16", 2},  {"uint16", 2},
    {"uint32", 4},  {"uint64", 8},  {"bfloat16", 2}};

const char *storageName(int32_t stype) {
  return stype == 1 ? "row_sparse" : stype == 2 ? "csr" : "unknown";
}

/// Little-endian reads that fail, with the offset, instead of overrunning.
class Reader {
public:
  Reader(const uint8_t *bytes, size_t size, std::string &error)
      : bytes(bytes), size(size), error(error) {}

  template <typename T> bool read(T &value, const char *what) {
    if (!need(sizeof(T), what))
      return false;
    std::memcpy(&value, bytes + offset, sizeof(T));
    offset += sizeof(T);
    return true;
  }

  bool readBytes(std::vector<uint8_t> &out, uint64_t n, const char *what) {
    if (!need(n, what))
      return false;
    out.assign(bytes + offset, bytes + offset + n);
    offset += n;
    return true;
  }

  bool fail(const std::string &message) {
    error = "byte " + std::to_string(offset) + ": " + message;
    return false;
  }

  size_t position() const { return offset; }
  size_t remaining() const { return size - offset; }

private:
  bool need(uint64_t n, const char *what) {
    if (n <= remaining())
      return true;
    return fail(std::string("file truncated while reading ") + what + " (needs " +
                std::to_string(n) + " bytes, " + std::to_string(remaining()) + " left)");
  }

  const uint8_t *bytes;
  size_t size;
  size_t offset = 0;
  std::string &error;
};

/// A TShape: i32 ndim then i64 dims (u32 dims in the pre-V1 layout).
template <typename Dim>
bool readDims(Reader &r, int64_t ndim, std::vector<int64_t> &shape) {
  if (ndim > kMaxDims)
    return r.fail("array has " + std::to_string(ndim) + " dims (at most " +
                  std::to_string(kMaxDims) + " are supported)");
  shape.clear();
  for (int64_t i = 0; i < ndim; ++i) {
    Dim d;
    if (!r.read(d, "a shape dim"))
      return false;
    if (static_cast<int64_t>(d) < 0)
      return r.fail("negative shape dim " + std::to_string(static_cast<int64_t>(d)));
    shape.push_back(static_cast<int64_t>(d));
  }
  return true;
}

bool readContextAndData(Reader &r, NDArrayRecord &a) {
  int32_t code;
  if (!r.read(a.devType, "the context") || !r.read(a.devId, "the context") ||
      !r.read(code, "the dtype"))
    return false;
  if (!isValidDType(code))
    return r.fail("unknown dtype code " + std::to_string(code));
  a.dtype = static_cast<DType>(code);
  std::optional<size_t> bytes = arrayByteSize(a.shape, dtypeSize(a.dtype));
  if (!bytes || *bytes > r.remaining())
    return r.fail("file truncated while reading the array data of shape " + shapeToString(a.shape) + " (needs " +
                  (bytes ? std::to_string(*bytes) : std::string("more than 2^63")) + " bytes, " +
                  std::to_string(r.remaining()) + " left)");
  return r.readBytes(a.data, *bytes, "the array data");
}

bool readArray(Reader &r, NDArrayRecord &a) {
  uint32_t magic;
  if (!r.read(magic, "an array header"))
    return false;
  if (magic != kV1Magic && magic != kV2Magic && magic != kV3Magic) {
    // Pre-V1: the first word is ndim, dims are u32.
    if (magic > static_cast<uint32_t>(kMaxDims))
      return r.fail("bad array magic 0x" + [&] {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%08X", magic);
        return std::string(buf);
      }());
    if (!readDims<uint32_t>(r, magic, a.shape))
      return false;
    return readContextAndData(r, a);
  }
  if (magic != kV1Magic) {
    int32_t stype;
    if (!r.read(stype, "the storage type"))
      return false;
    if (stype == 1 || stype == 2)
      return r.fail(std::string("sparse storage (") + storageName(stype) +
                    ") is not supported; save the array as dense");
    if (stype != 0 && stype != -1)
      return r.fail("unknown storage type " + std::to_string(stype));
  }
  int32_t ndim;
  if (!r.read(ndim, "the number of dims"))
    return false;
  // An unknown shape (-1), or ndim 0 outside np-shape files, is a none array.
  if (ndim == -1 || (ndim == 0 && magic != kV3Magic)) {
    a.isNone = true;
    return true;
  }
  if (ndim < 0)
    return r.fail("invalid number of dims " + std::to_string(ndim));
  if (!readDims<int64_t>(r, ndim, a.shape))
    return false;
  return readContextAndData(r, a);
}

template <typename T> void put(std::vector<uint8_t> &out, T value) {
  const auto *p = reinterpret_cast<const uint8_t *>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

} // namespace

bool isValidDType(int32_t code) {
  return code >= 0 && code < static_cast<int32_t>(std::size(kDTypes));
}

size_t dtypeSize(DType dtype) { return kDTypes[static_cast<int32_t>(dtype)].size; }

const char *dtypeName(DType dtype) { return kDTypes[static_cast<int32_t>(dtype)].name; }

bool dtypeFromName(const std::string &name, DType &dtype) {
  for (size_t code = 0; code < std::size(kDTypes); ++code)
    if (name == kDTypes[code].name) {
      dtype = static_cast<DType>(code);
      return true;
    }
  return false;
}

std::string shapeToString(const std::vector<int64_t> &shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::optional<size_t> arrayByteSize(const std::vector<int64_t> &shape, size_t elementSize) {
  constexpr uint64_t kLimit = SYMC_MAX_ARRAY_BYTES;
  uint64_t bytes = elementSize;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && bytes > kLimit / static_cast<uint64_t>(d))
      return std::nullopt;
    bytes *= static_cast<uint64_t>(d);
  }
  if (bytes > kLimit)
    return std::nullopt;
  return static_cast<size_t>(bytes);
}

bool parseParams(const uint8_t *bytes, size_t size, ParamsFile &out, std::string &error) {
  Reader r(bytes, size, error);
  uint64_t magic, reserved, count;
  if (!r.read(magic, "the file header"))
    return false;
  if (magic != kListMagic)
    return r.fail("not an MXNet NDArray file (header magic is not 0x112)");
  if (!r.read(reserved, "the file header") || !r.read(count, "the array count"))
    return false;
  // Each array takes at least 8 bytes: a cheap bound against absurd counts.
  if (count > r.remaining() / 8)
    return r.fail("array count " + std::to_string(count) + " exceeds what the file can hold");
  out.arrays.assign(count, NDArrayRecord());
  for (uint64_t i = 0; i < count; ++i) {
    if (!readArray(r, out.arrays[i])) {
      error += " (array " + std::to_string(i) + ")";
      return false;
    }
  }
  uint64_t names;
  if (!r.read(names, "the name count"))
    return false;
  if (names != 0 && names != count)
    return r.fail("the file has " + std::to_string(count) + " arrays but " +
                  std::to_string(names) + " names");
  out.named = names != 0;
  for (uint64_t i = 0; i < names; ++i) {
    uint64_t length;
    std::vector<uint8_t> text;
    if (!r.read(length, "a name length") || !r.readBytes(text, length, "a name"))
      return false;
    out.arrays[i].name.assign(text.begin(), text.end());
  }
  if (r.remaining() != 0)
    return r.fail(std::to_string(r.remaining()) + " unexpected bytes after the last name");
  return true;
}

namespace {

std::string sha256Of(const std::vector<uint8_t> &bytes) {
  Sha256 sha;
  sha.update(bytes.data(), bytes.size());
  return hexDigest(sha.finish());
}

/// Checks `bytes` against PATH.sha256 where that file exists (sha256sum's
/// format: the hex digest first).
bool matchesDigestFile(const std::string &path, const std::vector<uint8_t> &bytes, std::string &error) {
  std::vector<uint8_t> line;
  if (!readWholeFile(path + ".sha256", line))
    return true;
  std::string expected(line.begin(), line.begin() + std::min<size_t>(line.size(), 64));
  std::string actual = sha256Of(bytes);
  if (expected == actual)
    return true;
  error = path + ": its SHA-256 is " + actual + " but " + path + ".sha256 says " + expected +
          ": the file was modified or corrupted";
  return false;
}

} // namespace

bool loadParams(const std::string &path, ParamsFile &out, std::string &error) {
  std::vector<uint8_t> bytes;
  if (!readWholeFile(path, bytes)) {
    error = "cannot open " + path;
    return false;
  }
  if (!matchesDigestFile(path, bytes, error))
    return false;
  if (!parseParams(bytes.data(), bytes.size(), out, error)) {
    error = path + ": " + error;
    return false;
  }
  return true;
}

std::vector<uint8_t> serializeParams(const ParamsFile &file) {
  std::vector<uint8_t> out;
  put<uint64_t>(out, kListMagic);
  put<uint64_t>(out, 0);
  put<uint64_t>(out, file.arrays.size());
  for (const NDArrayRecord &a : file.arrays) {
    // Outside np-shape files ndim 0 means "none", so a 0-d array needs V3.
    put<uint32_t>(out, !a.isNone && a.shape.empty() ? kV3Magic : kV2Magic);
    put<int32_t>(out, a.isNone ? -1 : 0);
    if (a.isNone) {
      put<int32_t>(out, -1);
      continue;
    }
    put<int32_t>(out, static_cast<int32_t>(a.shape.size()));
    for (int64_t d : a.shape)
      put<int64_t>(out, d);
    put<int32_t>(out, a.devType);
    put<int32_t>(out, a.devId);
    put<int32_t>(out, static_cast<int32_t>(a.dtype));
    out.insert(out.end(), a.data.begin(), a.data.end());
  }
  put<uint64_t>(out, file.named ? file.arrays.size() : 0);
  if (file.named) {
    for (const NDArrayRecord &a : file.arrays) {
      put<uint64_t>(out, a.name.size());
      out.insert(out.end(), a.name.begin(), a.name.end());
    }
  }
  return out;
}

bool saveParams(const std::string &path, const ParamsFile &file, std::string &error) {
  std::vector<uint8_t> bytes = serializeParams(file);
  std::ofstream outFile(path, std::ios::binary);
  std::ofstream digestFile(path + ".sha256");
  std::string name = path.substr(path.find_last_of('/') + 1);
  if (!outFile.write(reinterpret_cast<const char *>(bytes.data()), bytes.size()) ||
      !(digestFile << sha256Of(bytes) << "  " << name << "\n")) {
    error = "cannot write " + path;
    return false;
  }
  return true;
}

} // namespace symc
