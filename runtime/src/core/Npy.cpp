//===- Npy.cpp - numpy .npy files -----------------------------------------===//
#include "symc/Npy.h"

#include "FileIO.h"
#include "TextScanner.h"

#include <cstring>
#include <fstream>

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

[[noreturn]] void failAt(const std::string &path, size_t offset, const std::string &what) {
  throw Error("MXNetError", path + ": byte " + std::to_string(offset) + ": " + what);
}

/// The header's Python dict literal, `{'descr': '<f4', 'fortran_order':
/// False, 'shape': (2, 3), }`, read by a scanner over its bytes: no regex
/// (std::regex recurses per character) and no unchecked number.
class HeaderParser : TextScanner<HeaderParser> {
public:
  HeaderParser(const std::string &path, const std::string &text, size_t fileOffset)
      : TextScanner(text), path(path), base(fileOffset) {}

  struct Header {
    std::string descr;
    bool fortranOrder = false;
    std::vector<int64_t> shape;
  };

  Header parse() {
    Header h;
    bool seen[3] = {false, false, false};
    expect('{');
    while (!consume('}')) {
      std::string key = quoted();
      expect(':');
      if (key == "descr")
        h.descr = quoted(), seen[0] = true;
      else if (key == "fortran_order")
        h.fortranOrder = boolean(), seen[1] = true;
      else if (key == "shape")
        h.shape = dims(), seen[2] = true;
      else
        fail("unknown header key '" + key + "'");
      if (!consume(',')) {
        expect('}');
        break;
      }
    }
    skipSpace();
    if (pos != text.size())
      fail("trailing characters after the header dict");
    if (!seen[0] || !seen[1] || !seen[2])
      fail("the header lacks 'descr', 'fortran_order' or 'shape'");
    return h;
  }

private:
  friend TextScanner;

  [[noreturn]] void fail(const std::string &what) const { failAt(path, base + pos, what); }

  std::string quoted() {
    skipSpace();
    if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"'))
      fail("malformed header: expected a quoted string");
    char quote = text[pos++];
    size_t end = text.find(quote, pos);
    if (end == std::string::npos)
      fail("malformed header: unterminated string");
    std::string s = text.substr(pos, end - pos);
    pos = end + 1;
    return s;
  }

  bool boolean() {
    skipSpace();
    for (auto [word, value] : {std::pair{"True", true}, std::pair{"False", false}})
      if (text.compare(pos, std::char_traits<char>::length(word), word) == 0) {
        pos += std::char_traits<char>::length(word);
        return value;
      }
    fail("malformed header: 'fortran_order' must be True or False");
  }

  /// A tuple of non-negative ints, `(2, 3)`, `(3,)` or `()`.
  std::vector<int64_t> dims() {
    expect('(');
    std::vector<int64_t> shape;
    while (!consume(')')) {
      shape.push_back(dim());
      consume('L'); // Python 2's long suffix
      if (!consume(',')) {
        expect(')');
        break;
      }
    }
    return shape;
  }

  int64_t dim() {
    skipSpace();
    if (pos < text.size() && text[pos] == '-')
      fail("negative dim in 'shape'");
    if (pos >= text.size() || !isdigit(static_cast<unsigned char>(text[pos])))
      fail("malformed header: 'shape' must be a tuple of ints");
    int64_t value = 0;
    for (; pos < text.size() && isdigit(static_cast<unsigned char>(text[pos])); ++pos) {
      int digit = text[pos] - '0';
      if (value > (INT64_MAX - digit) / 10)
        fail("dim in 'shape' exceeds 2^63");
      value = value * 10 + digit;
    }
    return value;
  }

  const std::string &path;
  size_t base;
};

} // namespace

NDArray loadNpy(const std::string &path) {
  std::vector<uint8_t> bytes;
  if (!readWholeFile(path, bytes))
    throw Error("MXNetError", "cannot open " + path);
  return parseNpy(bytes, path);
}

NDArray parseNpy(const std::vector<uint8_t> &bytes, const std::string &path) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    failAt(path, 0, "not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t headerLen = 0, headerStart = 0;
  if (major == 1) {
    headerLen = bytes[8] | bytes[9] << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      failAt(path, 8, "truncated header length");
    uint32_t len;
    std::memcpy(&len, bytes.data() + 8, 4);
    headerLen = len;
    headerStart = 12;
  } else {
    failAt(path, 6, "unsupported .npy version " + std::to_string(major));
  }
  if (headerLen > bytes.size() - headerStart)
    failAt(path, headerStart, "truncated header (" + std::to_string(headerLen) + " bytes declared)");
  std::string text(bytes.begin() + headerStart, bytes.begin() + headerStart + headerLen);
  HeaderParser::Header header = HeaderParser(path, text, headerStart).parse();
  if (header.fortranOrder)
    failAt(path, headerStart, "Fortran-ordered arrays are not supported");
  const Descr *found = nullptr;
  for (const Descr &d : kDescrs)
    if (header.descr == d.code)
      found = &d;
  if (!found)
    failAt(path, headerStart, "unsupported dtype '" + header.descr + "'");
  size_t dataStart = headerStart + headerLen, available = bytes.size() - dataStart;
  std::optional<size_t> expected = arrayByteSize(header.shape, dtypeSize(found->dtype));
  if (!expected || *expected != available)
    failAt(path, dataStart, "shape " + shapeToString(header.shape) + " of " + dtypeName(found->dtype) + " needs " +
                              (expected ? std::to_string(*expected) : std::string("more than 2^62")) +
                              " data bytes, the file has " + std::to_string(available));
  return NDArray::fromData(header.shape, found->dtype, bytes.data() + dataStart);
}

void saveNpy(const std::string &path, const NDArray &deviceOrHost) {
  NDArray array = deviceOrHost.toHost();
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
