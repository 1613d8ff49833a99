//===- Pipelines.cpp - symc's pass pipelines ------------------------------===//
#include "compiler/Pipelines/Pipelines.h"

#include "dialects/Sym/Transforms/Passes.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

namespace {
struct FrontendPipelineOptions : public PassPipelineOptions<FrontendPipelineOptions> {
  ListOption<std::string> shapes{*this, "shapes",
                                 llvm::cl::desc("input shapes as name:d0xd1x...")};
};
} // namespace

void symc::buildFrontendPipeline(OpPassManager &pm, const FrontendOptions &options) {
  sym::SymInferShapesOptions inferOptions;
  inferOptions.shapes = options.shapes;
  pm.addNestedPass<func::FuncOp>(sym::createSymInferShapes(inferOptions));
}

void symc::registerPipelines() {
  PassPipelineRegistration<FrontendPipelineOptions>(
      "sym-frontend", "Shape-infer imported sym IR",
      [](OpPassManager &pm, const FrontendPipelineOptions &opts) {
        buildFrontendPipeline(pm, FrontendOptions{{opts.shapes.begin(), opts.shapes.end()}});
      });
}
