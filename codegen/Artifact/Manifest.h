//===- Manifest.h - what an artifact tells the runtime about itself -*- C++ -*-===//
//
// The manifest is JSON embedded in every artifact. It names the arguments, aux
// states and outputs in MXNet's orders with their shapes and MXNet dtype
// names; a -1 dim is the dynamic batch size, one value for all of them, which
// the runtime passes to the entry point as dims[0]. It lists the graph's op nodes in MXNet's order and
// the compiled entry points. The runtime reads nothing else.
//
//===----------------------------------------------------------------------===//
#ifndef SYMC_CODEGEN_ARTIFACT_MANIFEST_H
#define SYMC_CODEGEN_ARTIFACT_MANIFEST_H

#include "symc/ArtifactABI.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

namespace symc {

/// Module attributes carrying the manifest JSON and the planned workspace
/// size from sym-artifact-abi / sym-plan-memory to sym-embed-manifest, and
/// the unit attribute marking the entry's implementation function (its last
/// argument is the workspace).
inline constexpr llvm::StringLiteral kManifestAttr = "symc.manifest";
inline constexpr llvm::StringLiteral kWorkspaceBytesAttr = "symc.workspace_bytes";
inline constexpr llvm::StringLiteral kImplAttr = "symc.entry_impl";
/// On the implementation of a monitor variant, which sym-plan-memory plans
/// a workspace of its own for (kMonitorWorkspaceBytesAttr, the manifest's
/// monitor.workspace_bytes): materializing every node takes more than the
/// fused entries need, and only a run with a monitor callback allocates it.
inline constexpr llvm::StringLiteral kMonitorImplAttr = "symc.monitor_impl";
inline constexpr llvm::StringLiteral kMonitorWorkspaceBytesAttr = "symc.monitor_workspace_bytes";
/// On sym-chunk-batch's loop over whole chunks of a dynamic batch: its rows
/// per chunk. The loop runs only for batches of at least that many rows,
/// so sym-plan-memory plans a smaller workspace for the smaller batches
/// (kSmallBatchWorkspaceAttr, the manifest's small_batch_workspace).
inline constexpr llvm::StringLiteral kBatchChunkAttr = "symc.batch_chunk";
inline constexpr llvm::StringLiteral kSmallBatchWorkspaceAttr = "symc.small_batch_workspace";

/// On an op whose result depends only on an argument (a convolution's
/// weight packed into the kernel's layout), as a string naming what it
/// computes: sym-outline-prepare moves it into the prepare entry, which the
/// runtime runs when that argument changed, and the forward reads its
/// result from a buffer the prepare entry writes.
inline constexpr llvm::StringLiteral kPrepareAttr = "symc.prepare";

inline constexpr int kArtifactAbiVersion = SYMC_ARTIFACT_ABI_VERSION;

/// Arguments, aux states and outputs of a sym-level @main.
llvm::json::Object describeInterface(mlir::func::FuncOp main);

/// The full manifest of @main (and of @main_train and @main_backward, when
/// compiled for training; either may be null) with symbol prefix `prefix`;
/// its workspace_bytes is filled in by sym-embed-manifest.
llvm::json::Object buildManifest(mlir::func::FuncOp main, mlir::func::FuncOp train,
                                 mlir::func::FuncOp backward, llvm::StringRef prefix);

/// Entry point names, shared by the code generator and the manifest.
std::string forwardEntryName(llvm::StringRef prefix);
std::string trainingForwardEntryName(llvm::StringRef prefix);
std::string backwardEntryName(llvm::StringRef prefix);
/// The entry of @main_monitor (or, `isTrain`, of @main_train_monitor).
std::string monitorEntryName(llvm::StringRef prefix, bool isTrain);
/// The entry of @main_backward_monitor.
std::string backwardMonitorEntryName(llvm::StringRef prefix);
/// The entry computing the prepared arrays (sym-outline-prepare).
std::string prepareEntryName(llvm::StringRef prefix);
std::string manifestEntryName(llvm::StringRef prefix);
std::string paramsEntryName(llvm::StringRef prefix);
/// The constant global holding the embedded manifest's text.
std::string manifestGlobalName(llvm::StringRef prefix);

/// One line on where an artifact's memory goes: the bound arrays, the
/// planned workspace and, compiled for training, the saved activations the
/// training forward keeps for the backward, the gradients and head
/// gradients. Arrays with the dynamic batch dim count per batch row.
std::string describeMemoryPlan(const llvm::json::Object &manifest);

} // namespace symc

#endif
