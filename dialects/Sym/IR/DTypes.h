//===- DTypes.h - MXNet dtype names and codes -------------------*- C++ -*-===//
#ifndef SYMC_DIALECTS_SYM_IR_DTYPES_H
#define SYMC_DIALECTS_SYM_IR_DTYPES_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::sym {

/// MXNet's dtype names ("float32") and codes (0) as element types; a null
/// type when unknown.
Type parseDTypeName(MLIRContext *ctx, llvm::StringRef name);
Type dtypeFromCode(MLIRContext *ctx, int64_t code);
/// The reverse: "" / -1 for a type MXNet has no dtype for.
llvm::StringRef dtypeName(Type type);
int64_t dtypeCode(Type type);

} // namespace mlir::sym

#endif
