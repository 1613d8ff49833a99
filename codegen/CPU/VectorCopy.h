//===- VectorCopy.h - buffer copies by vector loads and stores --*- C++ -*-===//
#ifndef SYMC_CODEGEN_CPU_VECTORCOPY_H
#define SYMC_CODEGEN_CPU_VECTORCOPY_H

#include "mlir/IR/Builders.h"

namespace symc::cpu {

/// Copies memref `from` into `to` (one shape) with vector loads and stores
/// along the innermost dim when that dim is static and contiguous in both,
/// else with linalg.copy. Bufferization's copies (a pad's interior, an
/// inserted slice) are mostly rows like that; as scalar loops, LLVM unrolls
/// them fully and, unable to rule out aliasing, never vectorizes them.
mlir::LogicalResult copyByVectors(mlir::OpBuilder &b, mlir::Location loc, mlir::Value from, mlir::Value to);

} // namespace symc::cpu

#endif
