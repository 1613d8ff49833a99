//===- SymOps.h - sym dialect ops -------------------------------*- C++ -*-===//
#ifndef SYMC_DIALECTS_SYM_IR_SYMOPS_H
#define SYMC_DIALECTS_SYM_IR_SYMOPS_H

#include "dialects/Sym/IR/ShapeInference.h"
#include "dialects/Sym/IR/SymDialect.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include <limits>

#include "dialects/Sym/IR/SymInterfaces.h.inc"

namespace mlir::sym {
/// Ops that compute each output element from the elements at the same
/// position of their operands (of one shape once shapes are known), with
/// no axis of their own: a layout change moves through them.
template <typename ConcreteType> class Elementwise : public OpTrait::TraitBase<ConcreteType, Elementwise> {};
} // namespace mlir::sym

#define GET_OP_CLASSES
#include "dialects/Sym/IR/SymOps.h.inc"

namespace mlir::sym {
/// MXNet's None in a tuple of optional ints (slice's begin, end and step),
/// a sentinel as MLIR's own ShapedType::kDynamic is.
inline constexpr int64_t kNone = std::numeric_limits<int64_t>::min();

/// What slice takes of one dim: `size` elements from `begin` by `step`.
struct SliceDim {
  int64_t begin, step, size;
};
/// The SliceDim of every dim of a `shape` input for slice's begin, end and
/// step (MXNet's GetIndexRange); failure sets `error` to MXNet's message.
FailureOr<llvm::SmallVector<SliceDim>> getSliceDims(llvm::ArrayRef<int64_t> begins, llvm::ArrayRef<int64_t> ends,
                                                    llvm::ArrayRef<int64_t> steps, llvm::ArrayRef<int64_t> shape,
                                                    std::string &error);

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
/// The message of the check `op` makes on its inputs where it runs, as
/// MXNet raises it ({0}, {1}, {2}: values reported with it), or "": take
/// with mode 'raise', gather_nd.
StringRef runTimeCheckMessage(Operation *op);
/// The MXNet node name the importer's location carries, or "".
StringRef nodeName(Location loc);
} // namespace mlir::sym

#endif
