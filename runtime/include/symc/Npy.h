//===- Npy.h - numpy .npy files ---------------------------------*- C++ -*-===//
#ifndef SYMC_RUNTIME_NPY_H
#define SYMC_RUNTIME_NPY_H

#include "symc/NDArray.h"

#include <cstdint>
#include <string>
#include <vector>

namespace symc {

/// Reads a C-ordered .npy (format 1.0-3.0) of a dtype MXNet has. Throws
/// symc::Error naming the file and byte offset.
NDArray loadNpy(const std::string &path);
/// The same for the bytes of a .npy file; `path` names it in errors.
NDArray parseNpy(const std::vector<uint8_t> &bytes, const std::string &path);
/// Writes format 1.0.
void saveNpy(const std::string &path, const NDArray &array);

} // namespace symc

#endif
