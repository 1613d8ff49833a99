//===- Npy.h - numpy .npy files ---------------------------------*- C++ -*-===//
#ifndef SYMC_RUNTIME_NPY_H
#define SYMC_RUNTIME_NPY_H

#include "symc/NDArray.h"

#include <string>

namespace symc {

/// Reads a C-ordered .npy (format 1.0-3.0) of a dtype MXNet has. Throws
/// symc::Error naming the file and byte offset.
NDArray loadNpy(const std::string &path);
/// Writes format 1.0.
void saveNpy(const std::string &path, const NDArray &array);

} // namespace symc

#endif
