//===- SymInterfaces.td - sym op interfaces ----------------*- tablegen -*-===//
#ifndef SYM_INTERFACES_TD
#define SYM_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Sym_ShapeInferenceOpInterface : OpInterface<"ShapeInferenceOpInterface"> {
  let cppNamespace = "::mlir::sym";
  let description = [{
    MXNet's FInferShape: given partially known input and output shapes, fill in
    what the op's rule determines, in both directions (an unknown input dim can
    be recovered from a known output). Conflicts are errors at the op.
  }];
  let methods = [
    InterfaceMethod<"Refines the partial shapes held by `ctx`.",
      "::mlir::LogicalResult", "inferShapes",
      (ins "::mlir::sym::ShapeInferenceContext &":$ctx)>,
    InterfaceMethod<[{
        MXNet's FInferType: the element type of result `index` given the
        operands' element types (null where still unknown).
      }],
      "::mlir::Type", "inferResultElementType",
      (ins "unsigned":$index, "::llvm::ArrayRef<::mlir::Type>":$operandTypes), [{}], [{
        return operandTypes.empty() ? ::mlir::Type() : operandTypes.front();
      }]>,
  ];
  let verify = [{ return ::mlir::sym::verifyShapesAgree($_op); }];
}

def Sym_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::mlir::sym";
  let description = [{
    MXNet's FGradient: the op's vector-Jacobian product, built from sym ops.
    Given the gradient flowing into each result (null where none flows), the
    rule appends one gradient per operand (null for an operand that gets
    none, such as a label). Rules are attached to the ops as external models
    (Gradients.cpp), so an op without one simply lacks the interface.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the operand gradients at `b`'s insertion point from
        `resultGrads`; reports an error at the op on failure.
      }],
      "::mlir::LogicalResult", "buildGradient",
      (ins "::mlir::OpBuilder &":$b, "::mlir::ValueRange":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
    InterfaceMethod<[{
        Whether the rule reads the gradient of result `index`. Loss heads
        (SoftmaxOutput, MakeLoss, ...) do not: an executor needs no head
        gradient for them.
      }],
      "bool", "readsResultGradient", (ins "unsigned":$index), [{}], [{
        return true;
      }]>,
    InterfaceMethod<[{
        MXNet's error when the gradient of operand `index` is asked for but
        the op cannot compute it (Embedding's data); empty when it can.
      }],
      "::llvm::StringRef", "refusedGradientMessage", (ins "unsigned":$index), [{}], [{
        return {};
      }]>,
  ];
}

#endif // SYM_INTERFACES_TD
