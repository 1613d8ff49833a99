//===- SymApproximateMath.cpp - the sym-approximate-math pass -------------===//
#include "codegen/CPU/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMAPPROXIMATEMATH
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

struct SymApproximateMathPass : impl::SymApproximateMathBase<SymApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace symc::cpu
