//===- SymDialect.h - the sym dialect ---------------------------*- C++ -*-===//
#ifndef SYMC_DIALECTS_SYM_IR_SYMDIALECT_H
#define SYMC_DIALECTS_SYM_IR_SYMDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "dialects/Sym/IR/SymDialect.h.inc"

namespace mlir::sym {
/// Function argument / result attributes written by the importer.
inline constexpr llvm::StringLiteral kNameAttr = "sym.name";   // MXNet name
inline constexpr llvm::StringLiteral kAuxAttr = "sym.aux";     // unit: aux state
// On @main_backward: the output a head-gradient argument belongs to, and the
// argument a result is the gradient of (MXNet names).
inline constexpr llvm::StringLiteral kHeadGradAttr = "sym.head_grad_of";
inline constexpr llvm::StringLiteral kGradOfAttr = "sym.grad_of";
inline constexpr llvm::StringLiteral kHiddenAttr = "sym.attrs"; // __hidden__ attrs
// On ops of @main_train: the op runs in training mode (MXNet's is_train).
inline constexpr llvm::StringLiteral kTrainAttr = "sym.is_train";
// On @main_backward: the aux state a result is the new value of (BatchNorm's
// moving statistics, which MXNet's CPU kernels update in backward).
inline constexpr llvm::StringLiteral kAuxUpdateOfAttr = "sym.aux_update_of";
// On a result of @main_train and the matching argument of @main_backward: a
// forward value kept for the backward (named "<node>_output<k>").
inline constexpr llvm::StringLiteral kSavedAttr = "sym.saved";
// On the 0-d i64 argument that the CPU lowering adds to a function with ops
// that draw random numbers: the step's seed (the entry reads it at dims[1]).
inline constexpr llvm::StringLiteral kRngSeedAttr = "sym.rng_seed";
// On the memref<4xi64> argument the C ABI gives every function: the run's
// SymcRunError (ArtifactABI.h), where failed run-time checks are reported.
inline constexpr llvm::StringLiteral kRunErrorAttr = "sym.run_error";
// On an argument of a static-shaped function: its leading dim is the batch,
// as inferring again with that dim unknown finds (sym-infer-shapes); the CPU
// backend may run the ops it reaches in chunks of the batch.
inline constexpr llvm::StringLiteral kBatchAttr = "sym.batch";
// On an op with a run-time check: its number in the manifest's "checks".
inline constexpr llvm::StringLiteral kCheckAttr = "sym.check";
// On a result of @main_monitor / @main_train_monitor: a node output the
// monitor callback reports, by its MXNet name ("<node>_output").
inline constexpr llvm::StringLiteral kMonitorAttr = "sym.monitor";
// On @main_backward_monitor: MXNet's backward graph (nodes, inputs, the
// results holding their outputs, the gradient entries), for the monitor
// and debug_str.
inline constexpr llvm::StringLiteral kBackwardGraphAttr = "sym.backward_graph";
// On the module: the graph as MXNet 1.9.1 symbol JSON (legacy files upgraded,
// --outputs applied), for get_optimized_symbol and debug_str.
inline constexpr llvm::StringLiteral kSymbolAttr = "sym.symbol";
} // namespace mlir::sym

#endif
