//===- Passes.h - CPU code generation passes --------------------*- C++ -*-===//
#ifndef SYMC_CODEGEN_CPU_PASSES_H
#define SYMC_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
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
/// Marks the linalg.generic of a lane contraction (LayerUtils.cpp): the
/// same treatment as a tap contraction, its own schedule.
constexpr llvm::StringLiteral kLaneContractionAttr = "symc.lane_contraction";
/// Lanes of a lane contraction: one AVX-512 vector of f32.
constexpr int64_t kContractionLanes = 16;

/// Whether `op` is a contraction sym-schedule-matmuls schedules, whose form
/// the passes before it keep.
inline bool isScheduledContraction(mlir::Operation *op) {
  return llvm::isa<mlir::linalg::MatmulOp, mlir::linalg::BatchMatmulOp>(op) ||
         op->hasAttr(kTapContractionAttr) || op->hasAttr(kLaneContractionAttr);
}

/// The loop dim sym-vectorize-elementwise vectorizes an elementwise
/// generic along: its innermost of more than one index, if every operand
/// reads or writes that dim contiguously or not at all.
std::optional<unsigned> elementwiseVectorDim(mlir::linalg::GenericOp op);
/// The length of the image rows that `rows` (dim 0: an image's positions,
/// maybe through an elementwise epilogue) are, where that image is padded
/// with a constant and read by its padding alone: sym-write-into-padding
/// then has the thread tiles that compute `rows` write into the padded
/// image, which needs each tile within one image row.
std::optional<int64_t> paddedImageRowLength(mlir::Value rows);

/// Lanes of the widest vector of f32 any target has: thread tiles keep a
/// vector dim in multiples of them.
constexpr int64_t kMaxVectorLanes = 16;

#define GEN_PASS_DECL
#include "codegen/CPU/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

#endif
