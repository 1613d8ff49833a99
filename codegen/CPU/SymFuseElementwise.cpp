//===- SymFuseElementwise.cpp - the sym-fuse-elementwise pass -------------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMFUSEELEMENTWISE
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// Only generic ops take part in fusion: named ops and tap contractions
/// keep their form, the one sym-schedule-matmuls expects.
bool onlyGenerics(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  auto keepsForm = [](Operation *op) {
    return isa_and_nonnull<linalg::LinalgOp>(op) && (!isa<linalg::GenericOp>(op) || isScheduledContraction(op));
  };
  return !keepsForm(producer) && !keepsForm(fused->getOwner());
}

/// Generics fuse unless the consumer broadcasts the producer's result: fused,
/// the producer would run once per element of the consumer instead of once
/// per element of its own (BatchNorm's per-channel 1/sqrt(var + eps) once
/// per pixel). LLVM does not hoist that work out of the pixel loops: its
/// operands are loads from the workspace, which the loops' stores may alias.
/// A producer that other ops read too is not copied into the consumer:
/// copies of copies grow exponentially (a backward's g*x + g*x, level after
/// level; x * x read through two operands), and the producer's result is
/// materialized for its other readers anyway.
bool fusesWithoutCopies(OpOperand *fused) { return fused->get().getDefiningOp()->hasOneUse(); }

bool genericsWithoutRecomputation(OpOperand *fused) {
  if (!onlyGenerics(fused) || !fusesWithoutCopies(fused))
    return false;
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  return !consumer || consumer.getMatchingIndexingMap(fused).isPermutation();
}

/// Whether `slice` keeps all of its source but the tail of its last dim:
/// a convolution's filters computed in whole strips of 32 (its weight
/// completed with zero filters), less the completion.
bool dropsLastDimTail(tensor::ExtractSliceOp slice) {
  RankedTensorType source = slice.getSourceType(), type = slice.getType();
  unsigned rank = source.getRank();
  if (!source.hasStaticShape() || !type.hasStaticShape() || type.getRank() != rank || !slice.hasUnitStride() ||
      !llvm::all_of(slice.getStaticOffsets(), [](int64_t offset) { return offset == 0; }))
    return false;
  return source.getShape().drop_back() == type.getShape().drop_back() &&
         type.getDimSize(rank - 1) < source.getDimSize(rank - 1);
}

/// Whether `value` is a scheduled contraction's result, maybe reshaped or
/// passed through elementwise generics.
bool computedByContraction(Value value) {
  while (Operation *op = value.getDefiningOp()) {
    if (isScheduledContraction(op))
      return true;
    if (auto reshape = dyn_cast<tensor::CollapseShapeOp>(op))
      value = reshape.getSrc();
    else if (auto reshape = dyn_cast<tensor::ExpandShapeOp>(op))
      value = reshape.getSrc();
    else if (auto generic = dyn_cast<linalg::GenericOp>(op);
             generic && generic.getNumParallelLoops() == generic.getNumLoops() && generic.getNumDpsInputs() > 0)
      value = generic.getDpsInputs()[0];
    else
      return false;
  }
  return false;
}

/// The slice of a contraction's result that drops the tail of its last dim
/// (dropsLastDimTail), read by `operand`.
tensor::ExtractSliceOp contractionColumnsSlice(Value operand) {
  auto slice = operand.getDefiningOp<tensor::ExtractSliceOp>();
  return slice && dropsLastDimTail(slice) && computedByContraction(slice.getSource()) ? slice
                                                                                       : tensor::ExtractSliceOp();
}

/// Whether `pad` pads constants around other dims than the last of a value
/// that only slices of the padded result read (a depthwise convolution's
/// taps): moving a slice of that value's last dim past the pad adds no copy.
bool slicesAfterPad(tensor::PadOp pad) {
  unsigned last = pad.getResultType().getRank() - 1;
  return pad.getConstantPaddingValue() && pad.getResultType().hasStaticShape() &&
         !ShapedType::isDynamicShape(pad.getStaticLow()) && !ShapedType::isDynamicShape(pad.getStaticHigh()) &&
         pad.getStaticLow()[last] == 0 && pad.getStaticHigh()[last] == 0 &&
         llvm::all_of(pad->getUsers(), [](Operation *user) { return isa<tensor::ExtractSliceOp>(user); });
}

/// An elementwise generic that reads a contraction's columns less their
/// tail (contractionColumnsSlice) runs over all of them instead, its
/// vectors along the last dim padded with zeros, and is sliced after: so
/// that sym-schedule-matmuls can run it as the contraction's epilogue (it
/// fuses none through a slice of the columns), and the slice can move on
/// past a pad (SinkColumnsSliceBelowPad). The tail's values are computed
/// and dropped. Only for a generic whose result alone such a pad reads
/// (slicesAfterPad): sliced anywhere else, its result would be copied to
/// be read contiguously, as the generic itself copies it now.
struct SinkColumnsSliceBelowElementwise : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op, PatternRewriter &rewriter) const override {
    if (op.getNumDpsInits() != 1 || op.getNumParallelLoops() != op.getNumLoops() || op.hasIndexSemantics())
      return failure();
    OpOperand *init = op.getDpsInitOperand(0);
    if (!init->get().getDefiningOp<tensor::EmptyOp>() || op.payloadUsesValueFromOperand(init) ||
        !op.getMatchingIndexingMap(init).isIdentity() || !op->hasOneUse())
      return failure();
    auto pad = dyn_cast<tensor::PadOp>(*op->user_begin());
    if (!pad || !slicesAfterPad(pad))
      return failure();
    SmallVector<OpOperand *> operands = op.getDpsInputOperands();
    tensor::ExtractSliceOp slice;
    for (OpOperand *operand : operands)
      if (!slice && op.getMatchingIndexingMap(operand).isIdentity())
        slice = contractionColumnsSlice(operand->get());
    if (!slice)
      return failure();
    RankedTensorType whole = slice.getSourceType();
    unsigned last = whole.getRank() - 1;
    AffineExpr lastLoop = rewriter.getAffineDimExpr(last);
    auto isSliced = [&](OpOperand *operand) {
      return operand->get() == slice.getResult() && op.getMatchingIndexingMap(operand).isIdentity();
    };
    // Any other operand read along the columns must be a vector (padded);
    // anything else would need a padded copy.
    auto isColumnVector = [&](AffineMap map) { return map.getNumResults() == 1 && map.getResult(0) == lastLoop; };
    if (!llvm::all_of(operands, [&](OpOperand *operand) {
          AffineMap map = op.getMatchingIndexingMap(operand);
          return isSliced(operand) || !map.isFunctionOfDim(last) || isColumnVector(map);
        }))
      return failure();
    Location loc = op.getLoc();
    SmallVector<Value> inputs;
    for (OpOperand *operand : operands) {
      if (isSliced(operand)) {
        inputs.push_back(slice.getSource());
        continue;
      }
      if (!op.getMatchingIndexingMap(operand).isFunctionOfDim(last)) {
        inputs.push_back(operand->get());
        continue;
      }
      auto type = cast<RankedTensorType>(operand->get().getType());
      Value zero = rewriter.create<arith::ConstantOp>(loc, rewriter.getZeroAttr(type.getElementType()));
      inputs.push_back(rewriter.create<tensor::PadOp>(
          loc, RankedTensorType::get({whole.getDimSize(last)}, type.getElementType()), operand->get(),
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(whole.getDimSize(last) - type.getDimSize(0))}, zero));
    }
    Type element = getElementTypeOrSelf(op->getResult(0).getType());
    Value empty = rewriter.create<tensor::EmptyOp>(loc, whole.getShape(), element);
    auto wide = rewriter.create<linalg::GenericOp>(loc, empty.getType(), inputs, ValueRange{empty},
                                                   op.getIndexingMapsArray(), op.getIteratorTypesArray());
    rewriter.inlineRegionBefore(op.getRegion(), wide.getRegion(), wide.getRegion().begin());
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(op, cast<RankedTensorType>(op->getResult(0).getType()),
                                                        wide->getResult(0),
                                                        slice.getMixedOffsets(), slice.getMixedSizes(),
                                                        slice.getMixedStrides());
    return success();
  }
};

/// A pad (slicesAfterPad) of a contraction's columns less their tail pads
/// all of them, and is sliced after (the taps then slice the padded
/// columns directly): the pad's source becomes the contraction's image,
/// which sym-write-into-padding computes in place.
struct SinkColumnsSliceBelowPad : OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad, PatternRewriter &rewriter) const override {
    tensor::ExtractSliceOp slice = contractionColumnsSlice(pad.getSource());
    if (!slice || !slicesAfterPad(pad))
      return failure();
    unsigned last = pad.getResultType().getRank() - 1;
    Location loc = pad.getLoc();
    SmallVector<int64_t> shape(pad.getResultType().getShape());
    shape[last] = slice.getSourceType().getDimSize(last);
    Value padding = pad.getConstantPaddingValue();
    auto wide = rewriter.create<tensor::PadOp>(loc, RankedTensorType::get(shape, pad.getResultType().getElementType()),
                                               slice.getSource(), pad.getMixedLowPad(), pad.getMixedHighPad(),
                                               padding);
    unsigned rank = shape.size();
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        pad, pad.getResultType(), wide.getResult(),
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)),
        getAsIndexOpFoldResult(rewriter.getContext(), pad.getResultType().getShape()),
        SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    return success();
  }
};

struct SymFuseElementwisePass : impl::SymFuseElementwiseBase<SymFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, genericsWithoutRecomputation);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, onlyGenerics);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    tensor::populateMergeConsecutiveInsertExtractSlicePatterns(patterns);
    patterns.add<SinkColumnsSliceBelowElementwise, SinkColumnsSliceBelowPad>(&getContext());
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace symc::cpu
