//===- Driver.h - the library behind the symc CLI ---------------*- C++ -*-===//
#ifndef SYMC_COMPILER_DRIVER_DRIVER_H
#define SYMC_COMPILER_DRIVER_DRIVER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/raw_ostream.h"
#include <string>
#include <vector>

namespace symc {

struct CompileOptions {
  std::string symbolPath;
  /// `name=d0,d1,...` as given on the command line ('?' keeps a dim dynamic).
  std::vector<std::string> shapes;
};

/// Registers the dialects symc's IR uses with `ctx`.
void loadDialects(mlir::MLIRContext &ctx);

/// Prints diagnostics as `file: node 'name': error: message` while alive.
class NodeDiagnosticPrinter {
public:
  NodeDiagnosticPrinter(mlir::MLIRContext &ctx, llvm::raw_ostream &os);
  ~NodeDiagnosticPrinter();

private:
  mlir::MLIRContext &ctx;
  mlir::DiagnosticEngine::HandlerID id;
};

/// Import + frontend pipeline: the shape-inferred sym module, or null.
mlir::OwningOpRef<mlir::ModuleOp> compileToSym(mlir::MLIRContext &ctx,
                                               const CompileOptions &options);

/// The symbol's interface as JSON: arguments, aux states and outputs with
/// their names, shapes (-1 for dynamic dims) and dtypes, in MXNet's orders.
void printInterface(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace symc

#endif
