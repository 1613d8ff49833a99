//===- Pipelines.h - symc's pass pipelines ----------------------*- C++ -*-===//
#ifndef SYMC_COMPILER_PIPELINES_PIPELINES_H
#define SYMC_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include <string>
#include <vector>

namespace symc {

struct FrontendOptions {
  /// Input shapes as `name:d0xd1x...` ('?' keeps a dim dynamic).
  std::vector<std::string> shapes;
};

/// Imported sym IR -> shape-inferred sym IR.
void buildFrontendPipeline(mlir::OpPassManager &pm, const FrontendOptions &options);

/// Registers the pipelines with the pass registry (for symc-opt).
void registerPipelines();

} // namespace symc

#endif
