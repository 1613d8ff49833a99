//===- EntryPoints.h - the exported entry points of an artifact -*- C++ -*-===//
#ifndef SYMC_CODEGEN_ARTIFACT_ENTRYPOINTS_H
#define SYMC_CODEGEN_ARTIFACT_ENTRYPOINTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

namespace symc {

/// Adds `int32_t <name>(void *const *buffers, const int64_t *dims, void
/// *workspace, SymcRunError *error)` (symc/ArtifactABI.h) calling `impl`, a
/// destination-passing implementation whose last two arguments are the
/// error and the workspace: a dynamic dim is the batch size, dims[0], and
/// the seed argument (the one with sym::kRngSeedAttr) reads dims[1]; the
/// buffers are the other arguments, in order. It returns error->check,
/// cleared before the call.
void buildEntry(mlir::ModuleOp module, mlir::func::FuncOp impl, llvm::StringRef name);

} // namespace symc

#endif
