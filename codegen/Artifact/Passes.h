//===- Passes.h - artifact ABI passes ---------------------------*- C++ -*-===//
#ifndef SYMC_CODEGEN_ARTIFACT_PASSES_H
#define SYMC_CODEGEN_ARTIFACT_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace symc {
#define GEN_PASS_DECL
#include "codegen/Artifact/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "codegen/Artifact/Passes.h.inc"
} // namespace symc

#endif
