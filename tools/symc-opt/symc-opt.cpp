//===- symc-opt.cpp - the pass tool for lit tests -------------------------===//
//
// MlirOptMain with the sym dialect, its passes and pipelines, and every
// upstream dialect and pass. The only translation unit that includes
// InitAll*: it is expensive to compile, so it stays small and stable.
//
//===----------------------------------------------------------------------===//
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "dialects/Sym/Transforms/Passes.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::sym::registerSymPasses();
  symc::registerPipelines();

  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  registry.insert<mlir::sym::SymDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "symc optimizer driver\n", registry));
}
