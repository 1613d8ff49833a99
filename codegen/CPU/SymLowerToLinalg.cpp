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

bool hasStaticShapes(Operation *op) {
  auto isStatic = [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked && ranked.hasStaticShape();
  };
  return llvm::all_of(op->getOperandTypes(), isStatic) && llvm::all_of(op->getResultTypes(), isStatic);
}

Lowered lowerOp(Operation *op, OpBuilder &b) {
  if (!hasStaticShapes(op))
    return op->emitError("the CPU backend needs static shapes; '")
           << op->getName().stripDialect() << "' has a dynamic or unranked operand or result";
  for (auto lower : {lowerElementwiseOp, lowerLayerOp, lowerShapeOp, lowerReductionOp})
    if (std::optional<Lowered> lowered = lower(op, b))
      return *lowered;
  return op->emitError("the CPU backend has no lowering for '") << op->getName().stripDialect() << "'";
}

struct SymLowerToLinalgPass : impl::SymLowerToLinalgBase<SymLowerToLinalgPass> {
  void runOnOperation() override {
    SmallVector<Operation *> symOps;
    getOperation().walk([&](Operation *op) {
      if (isa<sym::SymDialect>(op->getDialect()))
        symOps.push_back(op);
    });
    OpBuilder b(&getContext());
    for (Operation *op : symOps) {
      b.setInsertionPoint(op);
      Lowered replacements = lowerOp(op, b);
      if (failed(replacements))
        return signalPassFailure();
      op->replaceAllUsesWith(*replacements);
      op->erase();
    }
  }
};

} // namespace
} // namespace symc::cpu
