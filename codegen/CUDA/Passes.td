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
    (in 32-bit arithmetic where the space is static and fits) and runs the
    loop body, nested parallel loops sequentially. Where the space is large
    (a million iterations or more) and the body has no loops, a thread runs
    4 iterations a quarter of the space apart, their ops interleaved, so
    that its loads are in flight together. A loop that fills a buffer (a
    reduction's init) merges into the next loop when that one covers the
    same space and touches the buffer only at its own iterations' positions.
    The constants a kernel uses are built into it rather than passed to it.
    Host-level
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
    and each linalg.generic that is a batch of products sharing A
    (C[b, i, j] += A[i, k] * B[b, k, j]: a convolution's weight times each
    image's columns), whose operands are row-major with unit inner strides,
    becomes a call to the artifact ABI's `symcCudaGemm` (symc/ArtifactABI.h)
    with the three buffers as unranked memrefs (their descriptors: pointers,
    offset, sizes and strides), which libsymrt_cuda hands to
    cublasSgemmStridedBatched on the run's stream (a shared A with a zero
    batch stride). The product accumulates into the output (beta = 1), as
    the linalg op does. Other matmuls stay for sym-map-to-gpu.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect"
  ];
}

def SymSplitReductions : Pass<"sym-split-reductions", "::mlir::func::FuncOp"> {
  let summary = "Split long reductions with few outputs into partial reductions (GPU code)";
  let description = [{
    A reduction runs as a thread per output element that folds every
    element of its reduction serially. Where a linalg.generic on tensors has
    fewer than `min-threads` outputs and more than `max-serial` elements to
    fold into each, its outermost reduction dims become parallel: it writes
    one partial result per value of them, into tensors filled with the
    combiner's neutral element, and a second generic folds the partials into
    the original inits, with the same combiner. That generic is split again
    while it is still long. The innermost reduction dim stays serial, and
    generics with index ops, dynamic sizes, outputs indexed differently or a
    combiner without a neutral element are left alone. Then the loops of
    every generic are interchanged to put its parallel dims first (linalg's
    parallel loops would make a leading reduction dim a loop on the host,
    which launches a kernel per iteration).
  }];
  let options = [
    Option<"maxSerial", "max-serial", "int64_t", "256", "elements one thread may fold serially">,
    Option<"minThreads", "min-threads", "int64_t", "65536", "outputs from which a reduction is not split">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def SymMergeKernelModules : Pass<"sym-merge-kernel-modules", "::mlir::ModuleOp"> {
  let summary = "Put every outlined kernel into one gpu.module";
  let description = [{
    gpu-kernel-outlining makes a gpu.module per kernel; each would become a
    PTX image of its own that the driver compiles and loads on its own.
    This pass moves every kernel into one module, `symc_kernels`, with the
    globals outlining copied in for them (constant arrays, one copy of
    each), and points the launches at it, so an artifact carries one PTX
    image and the runtime loads it once per device.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

#endif
