//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
#ifndef SYMC_CODEGEN_CPU_PASSES_H
#define SYMC_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Pass/Pass.h"

namespace symc::cpu {

/// Marks the linalg.generic of a convolution by taps (LowerConvolution.cpp):
/// sym-schedule-matmuls schedules it as a matmul, sym-fuse-elementwise
/// leaves it alone.
constexpr llvm::StringLiteral kTapContractionAttr = "symc.tap_contraction";

#define GEN_PASS_DECL
#include "codegen/CPU/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

#endif
