//===- SymMergeKernelModules.cpp - the sym-merge-kernel-modules pass ------===//
#include "codegen/CUDA/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace symc::cuda {
#define GEN_PASS_DEF_SYMMERGEKERNELMODULES
#include "codegen/CUDA/Passes.h.inc"
} // namespace symc::cuda

using namespace mlir;

namespace symc::cuda {
namespace {

constexpr llvm::StringLiteral kMergedModuleName = "symc_kernels";

/// The MXNet node `loc` names (the first, for a fused location), spelled
/// as a PTX identifier may be; empty where none.
std::string nodeNameOf(Location loc) {
  std::string name;
  loc->walk([&](Location nested) {
    auto named = dyn_cast<NameLoc>(nested);
    if (!named)
      return WalkResult::advance();
    name = named.getName().str();
    return WalkResult::interrupt();
  });
  for (char &c : name)
    if (!llvm::isAlnum(c) && c != '_')
      c = '_';
  return name;
}

struct SymMergeKernelModulesPass : impl::SymMergeKernelModulesBase<SymMergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> kernelModules(module.getOps<gpu::GPUModuleOp>());
    if (kernelModules.empty())
      return;
    OpBuilder b(kernelModules.front());
    auto merged = b.create<gpu::GPUModuleOp>(module.getLoc(), kMergedModuleName);
    Block &body = merged.getBodyRegion().front();
    // Kernels are renamed after their modules, whose names are unique in
    // `module` (outlining names a kernel after its function: not unique),
    // and the MXNet node they compute, which a profile shows.
    llvm::DenseMap<SymbolRefAttr, std::string> nodes;
    module.walk([&](gpu::LaunchFuncOp launch) { nodes[launch.getKernel()] = nodeNameOf(launch.getLoc()); });
    llvm::DenseMap<SymbolRefAttr, StringAttr> renamed;
    for (gpu::GPUModuleOp kernels : kernelModules) {
      bool single = llvm::range_size(kernels.getOps<gpu::GPUFuncOp>()) == 1;
      for (gpu::GPUFuncOp kernel : llvm::make_early_inc_range(kernels.getOps<gpu::GPUFuncOp>())) {
        auto old = SymbolRefAttr::get(kernels.getSymNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        std::string name = single ? kernels.getSymName().str() : (kernels.getSymName() + "_" + kernel.getName()).str();
        if (std::string node = nodes.lookup(old); !node.empty())
          name += "__" + node;
        renamed[old] = StringAttr::get(&getContext(), name);
        kernel.setName(name);
        kernel->moveBefore(body.getTerminator());
      }
      // The globals outlining copied in for the kernels (constant arrays):
      // copies of one host global, so the first of each name serves all.
      for (memref::GlobalOp global : llvm::make_early_inc_range(kernels.getOps<memref::GlobalOp>()))
        if (!merged.lookupSymbol(global.getSymNameAttr()))
          global->moveBefore(body.getTerminator());
      kernels.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      StringAttr name = renamed.lookup(launch.getKernel());
      if (name)
        launch.setKernelAttr(SymbolRefAttr::get(merged.getSymNameAttr(), {FlatSymbolRefAttr::get(name)}));
    });
  }
};

} // namespace
} // namespace symc::cuda
