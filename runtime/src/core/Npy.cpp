//===- Npy.cpp - numpy .npy files -----------------------------------------===//
#include "symc/Npy.h"

#include "FileIO.h"

#include <cstring>
#include <fstream>
#include <regex>

namespace symc {
namespace {

struct Descr {
  const char *code;
  DType dtype;
};
constexpr Descr kDescrs[] = {{"<f4", DType::Float32}, {"<f8", DType::Float64},
                             {"<f2", DType::Float16}, {"|u1", DType::UInt8},
                             {"<i4", DType::Int32},   {"|i1", DType::Int8},
                             {"<i8", DType::Int64},   {"|b1", DType::Bool}};

[[noreturn]] void fail(const std::string &path, size_t offset, const std::string &what) {
  throw Error("MXNetError", path + ": byte " + std::to_string(offset) + ": " + what);
}

} // namespace

NDArray loadNpy(const std::string &path) {
  std::vector<uint8_t> raw;
  if (!readWholeFile(path, raw))
    throw Error("MXNetError", "cannot open " + path);
  std::string bytes(raw.begin(), raw.end());
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0)
    fail(path, 0, "not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen = 0, headerStart = 0;
  if (major == 1) {
    headerLen = uint8_t(bytes[8]) | uint8_t(bytes[9]) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      fail(path, 8, "truncated header length");
    uint32_t len;
    std::memcpy(&len, bytes.data() + 8, 4);
    headerLen = len;
    headerStart = 12;
  } else {
    fail(path, 6, "unsupported .npy version " + std::to_string(major));
  }
  if (headerStart + headerLen > bytes.size())
    fail(path, headerStart, "truncated header");
  std::string header = bytes.substr(headerStart, headerLen);
  std::smatch descr, order, shape;
  if (!std::regex_search(header, descr, std::regex("'descr':\\s*'([^']*)'")) ||
      !std::regex_search(header, order, std::regex("'fortran_order':\\s*(True|False)")) ||
      !std::regex_search(header, shape, std::regex("'shape':\\s*\\(([^)]*)\\)")))
    fail(path, headerStart, "malformed header: " + header);
  if (order[1] == "True")
    fail(path, headerStart, "Fortran-ordered arrays are not supported");
  const Descr *found = nullptr;
  for (const Descr &d : kDescrs)
    if (descr[1] == d.code)
      found = &d;
  if (!found)
    fail(path, headerStart, "unsupported dtype '" + descr[1].str() + "'");
  std::vector<int64_t> dims;
  std::string dimsText = shape[1];
  static const std::regex number("\\d+");
  for (std::sregex_iterator it(dimsText.begin(), dimsText.end(), number), end; it != end; ++it)
    dims.push_back(std::stoll(it->str()));
  NDArray array(dims, found->dtype);
  size_t dataStart = headerStart + headerLen;
  if (bytes.size() - dataStart != array.nbytes())
    fail(path, dataStart, "expected " + std::to_string(array.nbytes()) + " data bytes, found " +
                              std::to_string(bytes.size() - dataStart));
  std::memcpy(array.data(), bytes.data() + dataStart, array.nbytes());
  return array;
}

void saveNpy(const std::string &path, const NDArray &array) {
  const char *code = nullptr;
  for (const Descr &d : kDescrs)
    if (d.dtype == array.dtype())
      code = d.code;
  if (!code)
    throw Error("MXNetError", std::string("cannot write ") + dtypeName(array.dtype()) + " as .npy");
  std::string header = std::string("{'descr': '") + code + "', 'fortran_order': False, 'shape': " +
                       shapeToString(array.shape()) + ", }";
  // The data starts 64-byte aligned; the header ends with a newline.
  size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw Error("MXNetError", "cannot write " + path);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(header.size());
  out.put(static_cast<char>(len & 0xFF)).put(static_cast<char>(len >> 8));
  out << header;
  out.write(static_cast<const char *>(array.data()), array.nbytes());
}

} // namespace symc
