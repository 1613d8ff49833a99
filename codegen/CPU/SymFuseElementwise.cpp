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
    return isa_and_nonnull<linalg::LinalgOp>(op) && (!isa<linalg::GenericOp>(op) || op->hasAttr(kTapContractionAttr));
  };
  return !keepsForm(producer) && !keepsForm(fused->getOwner());
}

struct SymFuseElementwisePass : impl::SymFuseElementwiseBase<SymFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, onlyGenerics);
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, onlyGenerics);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace symc::cpu
