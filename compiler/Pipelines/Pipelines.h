//===- Pipelines.h - symc's pass pipelines ----------------------*- C++ -*-===//
#ifndef SYMC_COMPILER_PIPELINES_PIPELINES_H
#define SYMC_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include <string>
#include <vector>

namespace symc {

struct FrontendOptions {
  /// Input shapes as `name:d0xd1x...` ('?' keeps a dim dynamic).
  std::vector<std::string> shapes;
  /// Also differentiate @main into @main_backward.
  bool train = false;
  /// `NAME=write|add|null` per argument (the others are write).
  std::vector<std::string> gradReqs;
  /// Recompute cheap forward values in the backward (MXNet's mirror).
  bool mirror = false;
};

/// Imported sym IR -> shape-inferred sym IR (and its backward, for training).
void buildFrontendPipeline(mlir::OpPassManager &pm, const FrontendOptions &options);

struct CPUOptions {
  /// Prefix of the artifact's exported symbols.
  std::string prefix = "symc";
  /// Stop with linalg on tensors (for --emit=linalg) instead of the LLVM dialect.
  bool stopAtLinalg = false;
  /// The target's vector register width in bits (picks the GEMM micro-kernel).
  unsigned vectorBits = 256;
  /// CPU features the artifact needs, recorded in its manifest.
  std::vector<std::string> cpuFeatures;
  /// Batch rows per step of the loops over a dynamic batch dim.
  int64_t batchChunk = 16;
  /// A static batch of a memory-bound model runs in chunks where its
  /// largest activation outgrows this (sym-chunk-batch's chunk-bytes).
  int64_t batchChunkBytes = 4 << 20;
  /// A .params file to embed in the artifact (none when empty).
  std::string embeddedParams;
  /// Compile the monitor variants (sym-instrument-monitor) too.
  bool monitor = true;
  /// Prefixes of the same symbol compiled for other shapes, linked into the
  /// same artifact (listed in the manifest).
  std::vector<std::string> shapeVariants;
};

/// Shape-inferred sym IR -> LLVM dialect with the artifact ABI: lowering to
/// linalg, elementwise fusion, bufferization into the caller's buffers,
/// parallel loops on libsymrt's threads, then LLVM.
void buildCPUPipeline(mlir::OpPassManager &pm, const CPUOptions &options);

struct CUDAOptions {
  /// Prefix of the artifact's exported symbols.
  std::string prefix = "symc";
  /// The GPU architecture the PTX targets.
  std::string arch = "sm_90";
  /// CUDA's libdevice, linked into the kernels for math functions.
  std::string libdevice = "/usr/local/cuda/nvvm/libdevice/libdevice.10.bc";
  /// Stop with linalg on tensors (for --emit=linalg).
  bool stopAtLinalg = false;
  /// Batch rows per step of the loops over a dynamic batch dim.
  int64_t batchChunk = 16;
  /// A .params file to embed in the artifact (none when empty).
  std::string embeddedParams;
  /// Prefixes of the same symbol compiled for other shapes.
  std::vector<std::string> shapeVariants;
};

/// Shape-inferred sym IR -> LLVM dialect with the artifact ABI whose entry
/// points launch PTX kernels (embedded as a gpu.binary) on the buffers the
/// runtime passes, all in device memory.
void buildCUDAPipeline(mlir::OpPassManager &pm, const CUDAOptions &options);

/// Registers symc's passes and pipelines with the pass registry (for symc-opt).
void registerPassesAndPipelines();

} // namespace symc

#endif
