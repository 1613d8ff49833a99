//===- Registration.cpp - everything symc registers -----------------------===//
//
// The only translation unit that includes InitAll*: it is expensive to
// compile, so it stays small and stable.
//
//===----------------------------------------------------------------------===//
#include "compiler/Pipelines/Registration.h"

#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

void symc::registerDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<mlir::sym::SymDialect>();
}

void symc::registerAllPasses() {
  mlir::registerAllPasses();
  registerPassesAndPipelines();
}
