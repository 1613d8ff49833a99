//===- ObjectEmitter.h - LLVM dialect -> object file -> shared library -*- C++ -*-===//
#ifndef SYMC_CODEGEN_ARTIFACT_OBJECTEMITTER_H
#define SYMC_CODEGEN_ARTIFACT_OBJECTEMITTER_H

#include "mlir/IR/BuiltinOps.h"
#include <optional>
#include <string>
#include <vector>

namespace symc {

struct TargetOptions {
  /// An LLVM CPU name; "native" is the host CPU with its features.
  std::string cpu = "native";
};

struct TargetInfo {
  /// The width of the widest float vector registers (128/256/512).
  unsigned vectorBits = 128;
  /// The x86 features the generated code may use that the runtime checks
  /// before running it (avx2, fma, avx512f, ...).
  std::vector<std::string> checkedFeatures;
};

/// What code generation needs to know about the target CPU; nullopt with
/// `error` set for an unknown CPU.
std::optional<TargetInfo> describeTarget(const TargetOptions &target, std::string &error);

/// Translates an LLVM-dialect module (its context must have the LLVM IR
/// translations registered) to LLVM IR, optimizes it at -O3 for the
/// target CPU and writes an object file, compiling partitions of the module
/// in parallel, one per core; their local symbols become hidden ones named
/// after the artifact's `prefix`. Returns false with `error` set.
bool emitObjectFile(mlir::ModuleOp module, const TargetOptions &target, llvm::StringRef prefix,
                    const std::string &path, std::string &error);

/// The module as optimized LLVM IR text.
bool emitLLVMIR(mlir::ModuleOp module, const TargetOptions &target, llvm::raw_ostream &os,
                std::string &error);

/// Links objects into a shared library that needs only libc, libm and
/// libsymrt's symcParallelFor.
bool linkSharedLibrary(const std::vector<std::string> &objects, const std::string &output,
                       std::string &error);

/// A C header declaring the artifact's entry points for static linking (and the
/// embedded params' accessor when there is one).
std::string artifactHeader(llvm::StringRef prefix, bool embeddedParams, bool prepare, bool trainingForward,
                           bool backward, bool monitor, bool trainingMonitor, bool backwardMonitor);

} // namespace symc

#endif
