//===- SymDialect.cpp - the sym dialect -----------------------------------===//
#include "dialects/Sym/IR/SymDialect.h"
#include "dialects/Sym/IR/SymOps.h"

using namespace mlir;
using namespace mlir::sym;

#include "dialects/Sym/IR/SymDialect.cpp.inc"
#include "dialects/Sym/IR/SymInterfaces.cpp.inc"

void SymDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Sym/IR/SymOps.cpp.inc"
      >();
  registerGradientRules(*getContext());
}
