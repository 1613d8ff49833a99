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

/// Whether `op`'s training forward differs from its inference forward
/// (MXNet's is_train): BatchNorm without global stats, Dropout, rrelu.
bool isTrainSensitive(Operation *op);
/// Whether `op` (or the forward op a `_backward_*` op belongs to) runs in
/// training mode: marked kTrainAttr, which only train-sensitive ops get.
inline bool runsInTraining(Operation *op) { return op->hasAttr(kTrainAttr); }
/// The MXNet node name the importer's location carries, or "".
StringRef nodeName(Location loc);
} // namespace mlir::sym

#endif
