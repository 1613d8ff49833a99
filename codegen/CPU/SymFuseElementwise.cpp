//===- SymFuseElementwise.cpp - the sym-fuse-elementwise pass -------------===//
#include "codegen/CPU/Passes.h"

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

struct SymFuseElementwisePass : impl::SymFuseElementwiseBase<SymFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, genericsWithoutRecomputation);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, onlyGenerics);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace symc::cpu
