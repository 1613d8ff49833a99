//===- Passes.h - sym dialect passes ----------------------------*- C++ -*-===//
#ifndef SYMC_DIALECTS_SYM_TRANSFORMS_PASSES_H
#define SYMC_DIALECTS_SYM_TRANSFORMS_PASSES_H

#include "dialects/Sym/IR/SymDialect.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::sym {

#define GEN_PASS_DECL
#include "dialects/Sym/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "dialects/Sym/Transforms/Passes.h.inc"

} // namespace mlir::sym

#endif
