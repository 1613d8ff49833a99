//===- SymLowerToLinalg.cpp - the sym-lower-to-linalg pass ----------------===//
#include "codegen/CPU/OpLowerings.h"
#include "codegen/CPU/Passes.h"

#include "dialects/Sym/IR/SymDialect.h"

namespace symc::cpu {
#define GEN_PASS_DEF_SYMLOWERTOLINALG
#include "codegen/CPU/Passes.h.inc"
} // namespace symc::cpu

using namespace mlir;

namespace symc::cpu {
namespace {

/// Static shapes and signless (or float) elements, or the reason why not.
LogicalResult checkTypes(Operation *op) {
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    if (!ranked || !ranked.hasStaticShape())
      return op->emitError("the CPU backend needs static shapes; '")
             << op->getName().stripDialect() << "' has a dynamic or unranked operand or result";
    if (ranked.getElementType().isUnsignedInteger())
      return op->emitError("the CPU backend does not support unsigned element type ")
             << ranked.getElementType() << " yet";
  }
  return success();
}

Lowered lowerOp(Operation *op, OpBuilder &b, const LoweringOptions &options) {
  if (failed(checkTypes(op)))
    return failure();
  if (std::optional<Lowered> lowered = lowerConvolutionOp(op, b, options))
    return *lowered;
  // Ops that draw random numbers first: a Dropout that draws is no layer.
  for (auto lower : {lowerRandomOp, lowerElementwiseOp})
    if (std::optional<Lowered> lowered = lower(op, b))
      return *lowered;
  if (std::optional<Lowered> lowered = lowerLayerOp(op, b, options))
    return *lowered;
  for (auto lower : {lowerAttentionOp, lowerResamplingOp, lowerShapeOp, lowerReductionOp, lowerDetectionOp,
                     lowerIndexingOp, lowerRecurrentOp})
    if (std::optional<Lowered> lowered = lower(op, b))
      return *lowered;
  return op->emitError("the CPU backend has no lowering for '") << op->getName().stripDialect() << "'";
}

struct SymLowerToLinalgPass : impl::SymLowerToLinalgBase<SymLowerToLinalgPass> {
  using SymLowerToLinalgBase::SymLowerToLinalgBase;

  void runOnOperation() override {
    LoweringOptions options;
    options.packWeights = packWeights;
    options.gpu = gpu;
    SmallVector<Operation *> symOps;
    getOperation().walk([&](Operation *op) {
      if (isa<sym::SymDialect>(op->getDialect()))
        symOps.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : symOps) {
      b.setInsertionPoint(op);
      Lowered replacements = lowerOp(op, b, options);
      if (failed(replacements))
        return signalPassFailure();
      op->replaceAllUsesWith(*replacements);
      op->erase();
    }
  }
};

} // namespace
} // namespace symc::cpu
