//===- SymOps.h - sym dialect ops -------------------------------*- C++ -*-===//
#ifndef SYMC_DIALECTS_SYM_IR_SYMOPS_H
#define SYMC_DIALECTS_SYM_IR_SYMOPS_H

#include "dialects/Sym/IR/ShapeInference.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Sym/IR/SymInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Sym/IR/SymOps.h.inc"

namespace mlir::sym {
/// Attaches the GradientOpInterface rules (Gradients.cpp) to the ops that
/// have one.
void registerGradientRules(MLIRContext &ctx);
} // namespace mlir::sym

#endif
