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

#endif // SYM_INTERFACES_TD
