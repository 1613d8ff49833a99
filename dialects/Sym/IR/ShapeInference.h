//===- ShapeInference.h - MXNet's partial shapes ----------------*- C++ -*-===//
//
// MXNet infers shapes on partially known shapes: a shape may have an unknown
// rank, and a known rank may hold unknown (-1) dims. Each op refines the
// shapes of its inputs and outputs; a graph-level fixpoint runs the op rules
// forwards and backwards until nothing changes (sym-infer-shapes).
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_DIALECTS_SYM_IR_SHAPEINFERENCE_H
#define SYMC_DIALECTS_SYM_IR_SHAPEINFERENCE_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/SmallVector.h"
#include <optional>
#include <string>

namespace mlir::sym {

inline constexpr int64_t kUnknownDim = -1;

class PartialShape {
public:
  /// A shape of unknown rank.
  PartialShape() = default;
  PartialShape(llvm::ArrayRef<int64_t> dims) : dims(llvm::SmallVector<int64_t, 4>(dims)) {}
  PartialShape(std::initializer_list<int64_t> dims)
      : PartialShape(llvm::ArrayRef<int64_t>(dims)) {}
  static PartialShape ofRank(unsigned rank) {
    return PartialShape(llvm::SmallVector<int64_t, 4>(rank, kUnknownDim));
  }
  /// Reads a tensor type: unranked -> unknown rank, `?` -> unknown dim.
  static PartialShape fromType(Type type);
  /// A tensor type with this shape; dims still unknown become dynamic.
  Type toTensorType(Type elementType) const;

  bool hasRank() const { return dims.has_value(); }
  unsigned rank() const { return dims->size(); }
  llvm::ArrayRef<int64_t> getDims() const { return *dims; }
  int64_t operator[](unsigned i) const { return (*dims)[i]; }
  int64_t &operator[](unsigned i) { return (*dims)[i]; }
  bool isKnown(unsigned i) const { return (*dims)[i] >= 0; }
  bool isFullyKnown() const;
  /// The element count, when every dim is known.
  std::optional<int64_t> numElements() const;
  /// Product of dims [begin, end), when all of them are known.
  std::optional<int64_t> product(unsigned begin, unsigned end) const;

  /// Unifies `other` into this shape. Returns false on a rank or dim conflict.
  bool merge(const PartialShape &other);
  bool operator==(const PartialShape &other) const { return dims == other.dims; }
  bool operator!=(const PartialShape &other) const { return !(*this == other); }

  /// MXNet's rendering: [2,-1,3]; an unknown rank is [?].
  std::string str() const;

private:
  std::optional<llvm::SmallVector<int64_t, 4>> dims;
};

/// The shapes one op's rule works on, and the record of what it changed.
class ShapeInferenceContext {
public:
  ShapeInferenceContext(Operation *op, llvm::SmallVector<PartialShape> inputs,
                        llvm::SmallVector<PartialShape> outputs)
      : op(op), inputs(std::move(inputs)), outputs(std::move(outputs)) {}

  Operation *getOp() const { return op; }
  unsigned numInputs() const { return inputs.size(); }
  unsigned numOutputs() const { return outputs.size(); }
  const PartialShape &input(unsigned i) const { return inputs[i]; }
  const PartialShape &output(unsigned i) const { return outputs[i]; }
  llvm::ArrayRef<PartialShape> getInputs() const { return inputs; }
  llvm::ArrayRef<PartialShape> getOutputs() const { return outputs; }
  bool hasChanged() const { return changed; }

  /// Merges `shape` into input/output `i`; a conflict is an error naming it.
  LogicalResult refineInput(unsigned i, const PartialShape &shape);
  LogicalResult refineOutput(unsigned i, const PartialShape &shape);
  /// Reports a violated MXNet check at the op; always returns failure.
  LogicalResult fail(const llvm::Twine &message) const;

private:
  /// Merges `shape` into `slot`; false on a conflict.
  bool refine(PartialShape &slot, const PartialShape &shape);
  LogicalResult conflict(const llvm::Twine &what, const PartialShape &provided,
                         const PartialShape &inferred) const;

  Operation *op;
  llvm::SmallVector<PartialShape> inputs, outputs;
  bool changed = false;
};

/// Builds the context from the op's current types.
ShapeInferenceContext makeShapeContext(Operation *op);

/// Shared rules (MXNet's ElemwiseShape, BinaryBroadcastShapeCompact, ...).
LogicalResult inferSameShape(ShapeInferenceContext &ctx);
LogicalResult inferBroadcastShape(ShapeInferenceContext &ctx);
LogicalResult inferRegressionOutputShape(ShapeInferenceContext &ctx);
LogicalResult inferSoftmaxShape(ShapeInferenceContext &ctx, int64_t axis, bool useLength);
LogicalResult inferReduceShape(ShapeInferenceContext &ctx,
                               std::optional<llvm::ArrayRef<int64_t>> axis,
                               bool keepdims, bool exclude);
LogicalResult inferSearchAxisShape(ShapeInferenceContext &ctx, std::optional<int64_t> axis, bool keepdims);
LogicalResult inferFillShape(ShapeInferenceContext &ctx, llvm::ArrayRef<int64_t> shape);

/// MXNet's `dtype` params default to float32.
Type dtypeOrFloat32(std::optional<Type> dtype, MLIRContext *ctx);

/// Interface verifier: the op's rule accepts the shapes its types carry.
LogicalResult verifyShapesAgree(Operation *op);

/// An optional operand is present exactly when `condition` (e.g. "no_bias
/// = false") holds; `expected` says whether it does.
LogicalResult verifyOptionalOperand(Operation *op, Value operand, bool expected,
                                    llvm::StringRef operandName, llvm::StringRef condition);

} // namespace mlir::sym

#endif
