//===- SymBase.td - the sym dialect ------------------------*- tablegen -*-===//
//
// One op per MXNet operator, on tensors. Op names are MXNet's canonical
// registered names, attributes are MXNet's parameters with its defaults, and
// each op's location is a NameLoc carrying the MXNet node name.
//
//===----------------------------------------------------------------------===//
#ifndef SYM_BASE_TD
#define SYM_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Sym_Dialect : Dialect {
  let name = "sym";
  let cppNamespace = "::mlir::sym";
  let summary = "MXNet symbol graphs as tensor ops";
  let description = [{
    Ops mirror MXNet 1.9 operators one to one. Tensor types start unranked after
    import and are refined by `sym-infer-shapes`, which applies MXNet's
    InferShape rules forwards and backwards.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

// MXNet enum parameters are stored as strings restricted to the allowed set.
class Sym_StrEnumAttr<list<string> cases> : StringBasedAttr<
    CPred<"::llvm::is_contained(::llvm::ArrayRef<::llvm::StringRef>{\""
          # !interleave(cases, "\", \"") # "\"}, ::llvm::cast<::mlir::StringAttr>($_self).getValue())">,
    "string attribute, one of: " # !interleave(cases, ", ")>;

// MXNet ints are signed; I64Attr would hand them back zero-extended.
def Sym_IntAttr : TypedSignlessIntegerAttrBase<I64, "int64_t", "64-bit integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}
def Sym_PositiveIntAttr : ConfinedAttr<Sym_IntAttr, [IntPositive]>;
def Sym_NonNegativeIntAttr : ConfinedAttr<Sym_IntAttr, [IntNonNegative]>;
def Sym_FloatAttr : FloatAttrBase<F64, "64-bit float attribute"> {
  let returnType = "double";
  let convertFromStorage = "$_self.getValueAsDouble()";
  let constBuilderCall = "$_builder.getF64FloatAttr($0)";
}

// A dtype parameter ("float32", "int32", ...) is a type attribute.
def Sym_DTypeAttr : TypeAttrOf<AnyTypeOf<[F16, F32, F64, BF16, I8, I16, I32, I64, UI8, UI16, UI32, UI64, I1]>>;

#endif // SYM_BASE_TD
