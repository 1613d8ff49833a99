//===- Passes.td - CUDA code generation passes -------------*- tablegen -*-===//
#ifndef SYMC_CODEGEN_CUDA_PASSES_TD
#define SYMC_CODEGEN_CUDA_PASSES_TD

include "mlir/Pass/PassBase.td"

def SymMapToGPU : Pass<"sym-map-to-gpu", "::mlir::func::FuncOp"> {
  let summary = "Run a bufferized entry function's loops as GPU kernels";
  let description = [{
    Every scf.parallel at host level (outside any other parallel loop)
    becomes a gpu.launch of one thread per iteration: the iteration space is
    linearized, 256 threads a block, and each thread delinearizes its index
    and runs the loop body, nested parallel loops sequentially. Host-level
    code that reads or writes memory outside a parallel loop (a 0-d op, a
    full reduction's loop) becomes a launch of one thread, since every
    buffer lives on the device. Loops and conditionals that contain parallel
    loops stay on the host and launch kernels from each iteration. The
    step's random seed, which the runtime passes in host memory, is read
    once on the host. What cannot run this way (a call into symc's CPU
    kernel library, a run-time check that writes the host's error record, a
    buffer outside the workspace plan, a device value that steers host code)
    is an error at its MXNet node.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", "256", "threads per block">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::gpu::GPUDialect", "::mlir::scf::SCFDialect"
  ];
}

def SymOffloadMatmuls : Pass<"sym-offload-matmuls", "::mlir::ModuleOp"> {
  let summary = "Run f32 matmuls on buffers as cuBLAS GEMMs";
  let description = [{
    Each linalg.matmul and linalg.batch_matmul on f32 buffers at host level,
    whose operands are row-major with unit inner strides, becomes a call to
    the artifact ABI's `symcCudaGemm` (symc/ArtifactABI.h) with the three
    buffers as unranked memrefs (their descriptors: pointers, offset, sizes
    and strides), which libsymrt_cuda hands to cublasSgemmStridedBatched on
    the run's stream. The product
    accumulates into the output (beta = 1), as the linalg op does. Other
    matmuls stay for sym-map-to-gpu.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"
  ];
}

def SymMergeKernelModules : Pass<"sym-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Put every outlined kernel into one gpu.module";
  let description = [{
    gpu-kernel-outlining makes a gpu.module per kernel; each would become a
    PTX image of its own that the driver compiles and loads on its own.
    This pass moves every kernel into one module, `symc_kernels`, and points
    the launches at it, so an artifact carries one PTX image and the
    runtime loads it once per device.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif
