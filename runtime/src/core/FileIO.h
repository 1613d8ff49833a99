//===- FileIO.h - whole-file reads for the runtime ---------------*- C++ -*-===//
#ifndef SYMC_RUNTIME_CORE_FILEIO_H
#define SYMC_RUNTIME_CORE_FILEIO_H

#include <cstdint>
#include <string>
#include <vector>

namespace symc {

/// Opens the regular file `path` for reading and sets `size`; -1 with
/// `error` set (errno's text, or "not a regular file") otherwise.
int openRegularFile(const std::string &path, uint64_t &size, std::string &error);

/// Reads the regular file `path` in one read (weights files run to hundreds
/// of MB), sized by fstat so the buffer never outgrows the file; false when
/// it cannot be opened or read, or is not a regular file (a directory, a
/// pipe, a device).
bool readWholeFile(const std::string &path, std::vector<uint8_t> &bytes);

} // namespace symc

#endif
