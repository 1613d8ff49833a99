//===- DTypes.cpp - MXNet dtype names and codes ---------------------------===//
#include "dialects/Sym/IR/DTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSwitch.h"

using namespace mlir;

// Indexed by MXNet's dtype code (include/mxnet/base.h, mshadow::TypeFlag).
static const char *const kDTypeNames[] = {"float32", "float64", "float16", "uint8",  "int32",
                                          "int8",    "int64",   "bool",    "int16",  "uint16",
                                          "uint32",  "uint64",  "bfloat16"};

Type mlir::sym::parseDTypeName(MLIRContext *ctx, llvm::StringRef name) {
  Builder b(ctx);
  return llvm::StringSwitch<Type>(name)
      .Case("float32", b.getF32Type())
      .Case("float64", b.getF64Type())
      .Case("float16", b.getF16Type())
      .Case("bfloat16", b.getBF16Type())
      .Case("uint8", IntegerType::get(ctx, 8, IntegerType::Unsigned))
      .Case("int8", b.getIntegerType(8))
      .Case("int16", b.getIntegerType(16))
      .Case("int32", b.getI32Type())
      .Case("int64", b.getI64Type())
      .Case("uint16", IntegerType::get(ctx, 16, IntegerType::Unsigned))
      .Case("uint32", IntegerType::get(ctx, 32, IntegerType::Unsigned))
      .Case("uint64", IntegerType::get(ctx, 64, IntegerType::Unsigned))
      .Case("bool", b.getI1Type())
      .Default(Type());
}

Type mlir::sym::dtypeFromCode(MLIRContext *ctx, int64_t code) {
  if (code < 0 || code >= static_cast<int64_t>(std::size(kDTypeNames)))
    return Type();
  return parseDTypeName(ctx, kDTypeNames[code]);
}

llvm::StringRef mlir::sym::dtypeName(Type type) {
  for (const char *name : kDTypeNames)
    if (parseDTypeName(type.getContext(), name) == type)
      return name;
  return "";
}

int64_t mlir::sym::dtypeCode(Type type) {
  llvm::StringRef name = dtypeName(type);
  for (auto [code, candidate] : llvm::enumerate(kDTypeNames))
    if (name == candidate)
      return code;
  return -1;
}
