//===- SymMaterializeThroughReshapes.cpp - sym-materialize-through-reshapes ===//
#include "codegen/Artifact/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace symc {
#define GEN_PASS_DEF_SYMMATERIALIZETHROUGHRESHAPES
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

using namespace mlir;

namespace symc {
namespace {

/// Moves one reshape of `write`'s source onto its destination, a memref
/// defined in the function's entry block (an argument or a view made
/// here); false when there is none to move. A reshape that other ops read
/// too stays for them (a saved activation the forward goes on to read):
/// they then read the destination, where its source is computed.
bool peelReshape(bufferization::MaterializeInDestinationOp write, Block &entry) {
  Value dest = write.getDest(), source = write.getSource();
  if (dest.getParentBlock() != &entry || !isa<MemRefType>(dest.getType()))
    return false;
  OpBuilder b(write.getContext());
  b.setInsertionPointAfterValue(dest);
  Value view;
  if (auto expand = source.getDefiningOp<tensor::ExpandShapeOp>()) {
    view = b.create<memref::CollapseShapeOp>(write.getLoc(), dest, expand.getReassociationIndices());
    write.getSourceMutable().assign(expand.getSrc());
    if (expand->use_empty())
      expand.erase();
  } else if (auto collapse = source.getDefiningOp<tensor::CollapseShapeOp>()) {
    view = b.create<memref::ExpandShapeOp>(write.getLoc(), collapse.getSrcType().getShape(), dest,
                                           collapse.getReassociationIndices());
    write.getSourceMutable().assign(collapse.getSrc());
    if (collapse->use_empty())
      collapse.erase();
  } else {
    return false;
  }
  write.getDestMutable().assign(view);
  return true;
}

struct SymMaterializeThroughReshapesPass
    : impl::SymMaterializeThroughReshapesBase<SymMaterializeThroughReshapesPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    Block &entry = func.getBody().front();
    func.walk([&](bufferization::MaterializeInDestinationOp write) {
      while (peelReshape(write, entry)) {
      }
    });
  }
};

} // namespace
} // namespace symc
