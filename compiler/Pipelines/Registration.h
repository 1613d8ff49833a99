//===- Registration.h - everything symc registers ---------------*- C++ -*-===//
#ifndef SYMC_COMPILER_PIPELINES_REGISTRATION_H
#define SYMC_COMPILER_PIPELINES_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace symc {

/// The sym dialect, every upstream dialect, and the external interface models
/// (bufferization, tiling, deallocation, LLVM translation) the pipelines need.
void registerDialects(mlir::DialectRegistry &registry);

/// Every upstream pass plus symc's passes and pipelines (for symc-opt).
void registerAllPasses();

} // namespace symc

#endif
