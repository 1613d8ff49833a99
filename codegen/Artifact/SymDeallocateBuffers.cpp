//===- SymDeallocateBuffers.cpp - the sym-deallocate-buffers pass ---------===//
#include "codegen/Artifact/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/MapVector.h"

namespace symc {
#define GEN_PASS_DEF_SYMDEALLOCATEBUFFERS
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

using namespace mlir;

namespace symc {
namespace {

/// MLIR's buffer deallocation pipeline (buildBufferDeallocationPipeline),
/// its clean-ups run on every function at once rather than on the module.
OpPassManager deallocationPipeline() {
  OpPassManager pm(ModuleOp::getOperationName());
  pm.addPass(memref::createExpandReallocPass(/*emitDeallocs=*/false));
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(bufferization::createBufferDeallocationSimplificationPass());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  return pm;
}

/// The buffer an allocation owns: the allocation's own result, or the
/// result of the scf.if that yields it, where every branch of that if yields
/// an allocation of its own at that position (a tiled tensor.pad's padded
/// tile); null where it is yielded otherwise.
Value ownedBuffer(memref::AllocOp alloc) {
  Value buffer = alloc.getResult();
  for (Operation *user : buffer.getUsers()) {
    auto yield = dyn_cast<scf::YieldOp>(user);
    if (!yield)
      continue;
    auto branch = dyn_cast<scf::IfOp>(yield->getParentOp());
    if (!branch || branch.getElseRegion().empty() || llvm::count(yield.getOperands(), buffer) != 1)
      return Value();
    unsigned position = llvm::find(yield.getOperands(), buffer) - yield.getOperands().begin();
    for (scf::YieldOp each : {branch.thenYield(), branch.elseYield()})
      if (!each.getOperand(position).getDefiningOp<memref::AllocOp>() ||
          each.getOperand(position).getParentBlock() != each->getBlock())
        return Value();
    return branch.getResult(position);
  }
  return buffer;
}

/// The op of `buffer`'s block after which nothing uses `buffer` or a memref
/// that may alias it; failure where a use lets it escape the block (a
/// terminator, a call).
/// `handedToIf`: `buffer` is a branch's allocation, which its yield hands to
/// the if.
FailureOr<Operation *> lastUseInBlock(Value buffer, bool handedToIf) {
  Block *block = buffer.getParentBlock();
  Operation *last = buffer.getDefiningOp();
  SmallVector<Value> views = {buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (handedToIf && view == buffer && isa<scf::YieldOp>(user) && user->getBlock() == block)
        continue;
      if (user->hasTrait<OpTrait::IsTerminator>() || isa<CallOpInterface>(user))
        return failure();
      // Any memref a user returns may alias the buffer: a view, or a loop
      // carrying it (an scf.for of vector steps writing into it), whose
      // result a later op reads.
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          views.push_back(result);
      Operation *ancestor = block->findAncestorOpInBlock(*user);
      if (!ancestor)
        return failure();
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
    }
  }
  return last;
}

/// Frees every allocation after its last use, where each stays within its
/// block (or its if's); false, freeing none, where one does not.
bool deallocateLocally(ModuleOp module) {
  llvm::MapVector<Value, Operation *> frees;
  bool escapes = module
                     .walk([&](Operation *op) {
                       if (isa<memref::ReallocOp>(op))
                         return WalkResult::interrupt();
                       auto alloc = dyn_cast<memref::AllocOp>(op);
                       if (!alloc)
                         return WalkResult::advance();
                       Value buffer = ownedBuffer(alloc);
                       bool inBranch = buffer != alloc.getResult();
                       if (!buffer || (inBranch && failed(lastUseInBlock(alloc, /*handedToIf=*/true))))
                         return WalkResult::interrupt();
                       FailureOr<Operation *> last = lastUseInBlock(buffer, /*handedToIf=*/false);
                       if (failed(last))
                         return WalkResult::interrupt();
                       frees[buffer] = *last;
                       return WalkResult::advance();
                     })
                     .wasInterrupted();
  if (escapes)
    return false;
  for (auto [buffer, last] : frees) {
    OpBuilder b(last->getContext());
    b.setInsertionPointAfter(last);
    b.create<memref::DeallocOp>(buffer.getLoc(), buffer);
  }
  return true;
}

struct SymDeallocateBuffersPass : impl::SymDeallocateBuffersBase<SymDeallocateBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool allocates = module
                         .walk([](Operation *op) {
                           return isa<memref::AllocOp, memref::ReallocOp>(op) ? WalkResult::interrupt()
                                                                              : WalkResult::advance();
                         })
                         .wasInterrupted();
    if (!allocates || deallocateLocally(module))
      return;
    OpPassManager pipeline = deallocationPipeline();
    if (failed(runPipeline(pipeline, module)))
      signalPassFailure();
  }
};

} // namespace
} // namespace symc
