//===- SymbolImporter.h - MXNet symbol JSON to sym IR -----------*- C++ -*-===//
#ifndef SYMC_COMPILER_IMPORT_SYMBOLIMPORTER_H
#define SYMC_COMPILER_IMPORT_SYMBOLIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <string>

namespace symc {

/// Imports an MXNet symbol (JSON of any generation, legacy files upgraded as
/// MXNet 1.9.1 upgrades them) into a module holding `func.func @main`.
///
/// The function takes the symbol's arguments in list_arguments() order, then
/// its auxiliary states in list_auxiliary_states() order, each tagged with
/// `sym.name` (and `sym.aux`); it returns the heads, tagged with their
/// list_outputs() names. Tensor types are unranked until shape inference.
/// Errors are emitted as diagnostics naming the file, node and attribute;
/// the result is null on error. Non-empty `outputs` replace the heads with
/// the node outputs named `<key>_output` (MXPredCreatePartialOut).
mlir::OwningOpRef<mlir::ModuleOp> importSymbolJson(mlir::MLIRContext *ctx,
                                                   llvm::StringRef fileName,
                                                   llvm::StringRef json,
                                                   llvm::ArrayRef<std::string> outputs = {});

/// Reads and imports `path`.
mlir::OwningOpRef<mlir::ModuleOp> importSymbolFile(mlir::MLIRContext *ctx,
                                                   llvm::StringRef path,
                                                   llvm::ArrayRef<std::string> outputs = {});

} // namespace symc

#endif
