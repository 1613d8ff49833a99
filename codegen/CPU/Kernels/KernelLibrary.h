//===- KernelLibrary.h - hand-written kernels linked into artifacts -*- C++ -*-===//
//
// Some ops are sequential, data-dependent algorithms (sorting, non-maximum
// suppression) that read better and run faster as C++ than as loops built
// in MLIR. They are compiled to bitcode with symc (KernelABI.h) and linked
// into the LLVM module of each artifact that declares one, where LLVM
// optimizes them for the artifact's CPU like the generated code: an
// artifact stays one self-contained library.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_CODEGEN_CPU_KERNELS_KERNELLIBRARY_H
#define SYMC_CODEGEN_CPU_KERNELS_KERNELLIBRARY_H

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace symc::cpu {

/// Every kernel name starts with this.
inline constexpr const char kKernelPrefix[] = "symc_";

/// Links the kernels `module` declares into it, as internal functions
/// compiled for the module's target. False with `error` set on failure.
bool linkKernelLibrary(llvm::Module &module, std::string &error);

} // namespace symc::cpu

#endif
