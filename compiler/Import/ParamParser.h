//===- ParamParser.h - MXNet parameter strings to attributes ----*- C++ -*-===//
#ifndef SYMC_COMPILER_IMPORT_PARAMPARSER_H
#define SYMC_COMPILER_IMPORT_PARAMPARSER_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace symc {

/// Parses the string value MXNet saved for param `name` of `op` into the typed
/// attribute the sym op declares. Returns a null attribute for "None" (an
/// optional param left unset). On failure, `error` says what was expected.
mlir::FailureOr<mlir::Attribute> parseParam(mlir::MLIRContext *ctx, llvm::StringRef op,
                                            llvm::StringRef name, llvm::StringRef value,
                                            std::string &error);

} // namespace symc

#endif
