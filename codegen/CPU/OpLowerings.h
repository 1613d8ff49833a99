//===- OpLowerings.h - sym ops -> linalg, by family -------------*- C++ -*-===//
//
// Each function lowers the ops of its family and returns std::nullopt for an
// op it does not own; a returned failure has been reported at the op.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_CODEGEN_CPU_OPLOWERINGS_H
#define SYMC_CODEGEN_CPU_OPLOWERINGS_H

#include "codegen/CPU/LoweringUtils.h"
#include <optional>

namespace mlir::sym {
class ConvolutionOp;
class BackwardConvolutionOp;
} // namespace mlir::sym

namespace symc::cpu {

/// Ops that draw random numbers where they run (LowerRandom.cpp); the
/// same ops' deterministic forms belong to the other families.
std::optional<Lowered> lowerRandomOp(mlir::Operation *op, OpBuilder &b);
/// MXNet's inverted-dropout mask of `type`: 1/(1 - p) where a uniform draw
/// keeps the element (probability 1 - p), else 0. The draws are `op`'s
/// stream number `substream` under the step's seed: an op that recomputes
/// them (a backward) gets the same mask.
Value dropoutMask(OpBuilder &b, mlir::Operation *op, RankedTensorType type, double p, uint64_t substream);
std::optional<Lowered> lowerElementwiseOp(mlir::Operation *op, OpBuilder &b);
std::optional<Lowered> lowerAttentionOp(mlir::Operation *op, OpBuilder &b);
std::optional<Lowered> lowerResamplingOp(mlir::Operation *op, OpBuilder &b);
/// What the target's lowering may do beyond MXNet's semantics.
struct LoweringOptions {
  /// Convolutions may read their weights packed (marked kPrepareAttr):
  /// CPU code, whose prepare entry packs them once.
  bool packWeights = false;
  /// GPU code, where a parallel loop runs a thread per iteration and GEMMs
  /// are cuBLAS calls: ungrouped convolutions and their gradients are im2col
  /// GEMMs over whole batches (any other contraction would run a thread per
  /// output summing every tap), grouped ones direct; a pooling gradient is
  /// gathered at each input element (not scattered plane by plane).
  bool gpu = false;
};
std::optional<Lowered> lowerConvolutionOp(mlir::Operation *op, OpBuilder &b, const LoweringOptions &options);
std::optional<Lowered> lowerLayerOp(mlir::Operation *op, OpBuilder &b, const LoweringOptions &options);
/// Whether a convolution or its gradient, either layout, has channels-last
/// kernels of its own (on prepared weights): 2-d f32 depthwise and ungrouped
/// ones. Others run channels-last through transposes.
bool hasChannelsLastKernel(mlir::sym::ConvolutionOp op);
bool hasChannelsLastKernel(mlir::sym::BackwardConvolutionOp op);
std::optional<Lowered> lowerShapeOp(mlir::Operation *op, OpBuilder &b);
std::optional<Lowered> lowerReductionOp(mlir::Operation *op, OpBuilder &b);
std::optional<Lowered> lowerDetectionOp(mlir::Operation *op, OpBuilder &b);
std::optional<Lowered> lowerIndexingOp(mlir::Operation *op, OpBuilder &b);
std::optional<Lowered> lowerRecurrentOp(mlir::Operation *op, OpBuilder &b);

} // namespace symc::cpu

#endif
