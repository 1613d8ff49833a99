//===- SymOps.h - sym dialect ops -------------------------------*- C++ -*-===//
#ifndef SYMC_DIALECTS_SYM_IR_SYMOPS_H
#define SYMC_DIALECTS_SYM_IR_SYMOPS_H

#include "dialects/Sym/IR/ShapeInference.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Sym/IR/SymInterfaces.h.inc"

#define GET_OP_CLASSES
#include "dialects/Sym/IR/SymOps.h.inc"

namespace mlir::sym {
/// Attaches the GradientOpInterface rules (Gradients.cpp) to the ops that
/// have one.
void registerGradientRules(MLIRContext &ctx);

/// Whether `op`'s gradient is zero by definition (MXNet's
/// MakeZeroGradNodes: rounding, comparisons, *_like).
bool hasZeroGradient(Operation *op);

/// Whether `op`'s training forward differs from its inference forward
/// (MXNet's is_train): BatchNorm without global stats, Dropout, rrelu.
bool isTrainSensitive(Operation *op);
/// Whether `op` (or the forward op a `_backward_*` op belongs to) runs in
/// training mode: marked kTrainAttr, which only train-sensitive ops get.
inline bool runsInTraining(Operation *op) { return op->hasAttr(kTrainAttr); }
/// Clones `forward` as `name` with its train-sensitive ops marked to run in
/// training mode; null (nothing cloned) when it has none.
func::FuncOp cloneInTrainingMode(func::FuncOp forward, StringRef name);
/// Whether `op` draws random numbers where it runs: Dropout in training (or
/// mode 'always') with p > 0, rrelu in training.
bool drawsRandomNumbers(Operation *op);
/// The argument (kRngSeedAttr) that carries the step's random seed into a
/// function with ops that draw random numbers; added as a 0-d i64 tensor
/// where the function has none yet.
BlockArgument seedArgument(FunctionOpInterface function);
/// The MXNet node name the importer's location carries, or "".
StringRef nodeName(Location loc);
} // namespace mlir::sym

#endif
