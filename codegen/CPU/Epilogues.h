//===- Epilogues.h - Elementwise work moved onto a contraction's tiles ----===//
#ifndef SYMC_CODEGEN_CPU_EPILOGUES_H
#define SYMC_CODEGEN_CPU_EPILOGUES_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace symc::cpu {

/// Moves the elementwise op that reads `contraction`'s result (through
/// reshapes and slices from its origin: a convolution's BatchNorm, bias,
/// activation, residual add) onto that result, in place: a generic over the
/// contraction's own 2-D index space whose init is the contraction's
/// result, so that each thread tile applies it while the tile is in cache.
/// The consumer's result is rebuilt from it by the same reshapes. Returns
/// that generic, or null where there is no such consumer or one of its
/// operands cannot be indexed by the contraction's rows and columns.
mlir::linalg::GenericOp fuseEpilogue(mlir::linalg::LinalgOp contraction);

} // namespace symc::cpu

#endif // SYMC_CODEGEN_CPU_EPILOGUES_H
