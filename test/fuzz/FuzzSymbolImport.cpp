//===- FuzzSymbolImport.cpp - libFuzzer harness: symbol JSON --------------===//
//
// Any bytes as a symbol file, through the importer and the frontend
// pipeline (shape inference from `__shape__` attributes): a diagnostic or a
// verified module, never a crash. The importer's sources are compiled into
// this harness with coverage; MLIR and the passes are not instrumented.
//
//===----------------------------------------------------------------------===//
#include "compiler/Driver/Driver.h"
#include "compiler/Import/SymbolImporter.h"
#include "compiler/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext ctx(mlir::MLIRContext::Threading::DISABLED);
  symc::loadDialects(ctx);
  mlir::ScopedDiagnosticHandler quiet(&ctx, [](mlir::Diagnostic &) { return mlir::success(); });
  llvm::StringRef json(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module = symc::importSymbolJson(&ctx, "input.json", json, {});
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::PassManager pm(&ctx);
  symc::buildFrontendPipeline(pm, symc::FrontendOptions{});
  (void)pm.run(*module);
  return 0;
}
