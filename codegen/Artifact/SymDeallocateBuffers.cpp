//===- SymDeallocateBuffers.cpp - the sym-deallocate-buffers pass ---------===//
#include "codegen/Artifact/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

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

struct SymDeallocateBuffersPass : impl::SymDeallocateBuffersBase<SymDeallocateBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool allocates = module
                         .walk([](Operation *op) {
                           return isa<memref::AllocOp, memref::ReallocOp>(op) ? WalkResult::interrupt()
                                                                              : WalkResult::advance();
                         })
                         .wasInterrupted();
    if (!allocates)
      return;
    OpPassManager pipeline = deallocationPipeline();
    if (failed(runPipeline(pipeline, module)))
      signalPassFailure();
  }
};

} // namespace
} // namespace symc
