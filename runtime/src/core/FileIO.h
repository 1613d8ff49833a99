//===- FileIO.h - whole-file reads for the runtime ---------------*- C++ -*-===//
#ifndef SYMC_RUNTIME_CORE_FILEIO_H
#define SYMC_RUNTIME_CORE_FILEIO_H

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace symc {

/// Reads `path` in one read (weights files run to hundreds of MB); false
/// when it cannot be opened or read.
inline bool readWholeFile(const std::string &path, std::vector<uint8_t> &bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    return false;
  std::streamsize size = in.tellg();
  if (size < 0)
    return false;
  bytes.resize(static_cast<size_t>(size));
  in.seekg(0);
  return static_cast<bool>(in.read(reinterpret_cast<char *>(bytes.data()), size));
}

} // namespace symc

#endif
