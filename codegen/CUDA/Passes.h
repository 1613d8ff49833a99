//===- Passes.h - CUDA code generation passes -------------------*- C++ -*-===//
#ifndef SYMC_CODEGEN_CUDA_PASSES_H
#define SYMC_CODEGEN_CUDA_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/Pass.h"

namespace symc::cuda {

/// Marks the declaration of a function of libsymrt_cuda that host code
/// calls (symcCudaGemm): sym-map-to-gpu leaves such calls on the host.
constexpr llvm::StringLiteral kDeviceRuntimeAttr = "symc.device_runtime";

#define GEN_PASS_DECL
#include "codegen/CUDA/Passes.h.inc"
#define GEN_PASS_REGISTRATION
#include "codegen/CUDA/Passes.h.inc"

} // namespace symc::cuda

#endif
