//===- SymFuseIntoImageLoops.cpp - the sym-fuse-into-image-loops pass ------===//
//
// A batch convolves one image group per iteration of an scf.for that
// inserts each group's result into the batch (LowerConvolution.cpp). The
// elementwise work after the convolution (BatchNorm, activation, a residual
// add) would then run over the whole batch once the loop is done, reading
// and writing activations long gone from the cache, after a copy of every
// group's result into the batch. Moved into the loop, it works on each
// group's result as it comes out, where sym-schedule-matmuls fuses it into
// the GEMM's thread tiles as at batch 1.
//
//===----------------------------------------------------------------------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMFUSEINTOIMAGELOOPS
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

bool isElementwise(linalg::GenericOp op) {
  return op.getNumLoops() == op.getNumParallelLoops() &&
         llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) { return map.isProjectedPermutation(); });
}

/// The insert_slice that `loop` (of one result) yields into its iteration
/// argument, each iteration's piece of the result.
tensor::InsertSliceOp yieldedInsert(scf::ForOp loop) {
  if (loop.getNumResults() != 1)
    return {};
  auto insert = loop.getYieldedValues()[0].getDefiningOp<tensor::InsertSliceOp>();
  return insert && insert.getDest() == loop.getRegionIterArgs()[0] ? insert : tensor::InsertSliceOp();
}

/// The elementwise op that alone reads `loop`'s result, identically.
linalg::GenericOp soleElementwiseConsumer(scf::ForOp loop) {
  Value result = loop.getResult(0);
  if (!result.hasOneUse())
    return {};
  OpOperand &use = *result.use_begin();
  auto consumer = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!consumer || !isElementwise(consumer) || consumer->getNumResults() != 1 ||
      !consumer.isDpsInput(&use) || !consumer.getMatchingIndexingMap(&use).isIdentity())
    return {};
  return consumer;
}

/// Where the fused consumer read each group's result from its copy into the
/// batch, it reads the group's result itself, and the loop stops building
/// the batch no one reads any more (the canonicalizer then drops the copy
/// and the loop's result).
void readGroupsDirectly(IRRewriter &rewriter, OpOperand &groupResult) {
  auto copy = groupResult.get().getDefiningOp<linalg::CopyOp>();
  auto loop = groupResult.getOwner()->getParentOfType<scf::ForOp>();
  if (!copy || !loop || !loop.getResult(0).use_empty())
    return;
  rewriter.modifyOpInPlace(groupResult.getOwner(), [&] { groupResult.set(copy.getInputs()[0]); });
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, loop.getRegionIterArgs()[0]); });
}

/// The fused consumer writes a fresh tensor rather than the batch's slice:
/// the form sym-schedule-matmuls fuses into a GEMM's tiles (copyIntoBatch
/// then puts it in the batch).
void writeFreshTensor(IRRewriter &rewriter, linalg::GenericOp consumer) {
  OpOperand *init = consumer.getDpsInitOperand(0);
  if (consumer.payloadUsesValueFromOperand(init))
    return;
  auto type = cast<RankedTensorType>(init->get().getType());
  rewriter.setInsertionPoint(consumer);
  Value empty = rewriter.create<tensor::EmptyOp>(consumer.getLoc(), type.getShape(), type.getElementType());
  rewriter.modifyOpInPlace(consumer, [&] { init->set(empty); });
}

/// The group's result reaches the batch by a linalg.copy into the batch's
/// slice, which sym-distribute-threads splits over the threads, as
/// LowerConvolution's insertImages does (a bare insert_slice would copy on
/// one thread).
void copyIntoBatch(IRRewriter &rewriter, scf::ForOp loop) {
  auto insert = loop.getYieldedValues().back().getDefiningOp<tensor::InsertSliceOp>();
  if (!insert || insert.getSource().getDefiningOp<linalg::CopyOp>())
    return;
  rewriter.setInsertionPoint(insert);
  Location loc = insert.getLoc();
  Value slice = rewriter.create<tensor::ExtractSliceOp>(loc, insert.getSourceType(), insert.getDest(),
                                                        insert.getMixedOffsets(), insert.getMixedSizes(),
                                                        insert.getMixedStrides());
  Value copy = rewriter.create<linalg::CopyOp>(loc, insert.getSource(), slice).getResult(0);
  rewriter.modifyOpInPlace(insert, [&] { insert.getSourceMutable().set(copy); });
}

struct SymFuseIntoImageLoopsPass : impl::SymFuseIntoImageLoopsBase<SymFuseIntoImageLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) {
      if (yieldedInsert(loop) && soleElementwiseConsumer(loop))
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ForOp loop : loops) {
      // (Found again: a consumer of two loops' results, a residual add of
      // two convolutions, moves into the first and is gone for the second.)
      linalg::GenericOp consumer = soleElementwiseConsumer(loop);
      if (!consumer)
        continue;
      // Nothing between the two reads the loop's result: the loop can run
      // right before its consumer, after everything else the consumer reads.
      loop->moveBefore(consumer);
      FailureOr<scf::SCFFuseConsumerOfSliceResult> fused =
          scf::tileAndFuseConsumerOfSlice(rewriter, yieldedInsert(loop));
      if (failed(fused))
        continue;
      // The loop's new last result is the consumer's.
      auto fusedLoop = fused->tiledAndFusedConsumerOperand->getOwner()->getParentOfType<scf::ForOp>();
      rewriter.replaceOp(consumer, fusedLoop.getResults().back());
      readGroupsDirectly(rewriter, *fused->tiledAndFusedConsumerOperand);
      writeFreshTensor(rewriter, cast<linalg::GenericOp>(fused->tiledAndFusedConsumerOperand->getOwner()));
      copyIntoBatch(rewriter, fusedLoop);
    }
  }
};

} // namespace
} // namespace symc::cpu
