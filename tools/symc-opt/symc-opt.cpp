//===- symc-opt.cpp - the pass tool for lit tests -------------------------===//
//
// MlirOptMain with the sym dialect, its passes and pipelines, and every
// upstream dialect and pass.
//
//===----------------------------------------------------------------------===//
#include "compiler/Pipelines/Registration.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  symc::registerAllPasses();
  mlir::DialectRegistry registry;
  symc::registerDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "symc optimizer driver\n", registry));
}
