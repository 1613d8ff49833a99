//===- SymMergeKernelModules.cpp - the sym-merge-kernel-modules pass ------===//
#include "codegen/CUDA/Passes.h"

namespace symc::cuda {
#define GEN_PASS_DEF_SYMMERGEKERNELMODULES
#include "codegen/CUDA/Passes.h.inc"
} // namespace symc::cuda

using namespace mlir;

namespace symc::cuda {
namespace {

constexpr llvm::StringLiteral kMergedModuleName = "symc_kernels";

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
    // `module` (outlining names a kernel after its function: not unique).
    llvm::DenseMap<SymbolRefAttr, StringAttr> renamed;
    for (gpu::GPUModuleOp kernels : kernelModules) {
      bool single = llvm::range_size(kernels.getOps<gpu::GPUFuncOp>()) == 1;
      for (gpu::GPUFuncOp kernel : llvm::make_early_inc_range(kernels.getOps<gpu::GPUFuncOp>())) {
        auto old = SymbolRefAttr::get(kernels.getSymNameAttr(), {FlatSymbolRefAttr::get(kernel.getNameAttr())});
        StringAttr name = single ? kernels.getSymNameAttr()
                                 : StringAttr::get(&getContext(), kernels.getSymName() + "_" + kernel.getName());
        renamed[old] = name;
        kernel.setName(name);
        kernel->moveBefore(body.getTerminator());
      }
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
