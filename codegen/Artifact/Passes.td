//===- Passes.td - artifact ABI passes ---------------------*- tablegen -*-===//
#ifndef SYMC_CODEGEN_ARTIFACT_PASSES_TD
#define SYMC_CODEGEN_ARTIFACT_PASSES_TD

include "mlir/Pass/PassBase.td"

def SymArtifactABI : Pass<"sym-artifact-abi", "::mlir::ModuleOp"> {
  let summary = "Give @main the artifact's C ABI and embed the manifest";
  let description = [{
    Rewrites the sym-level `@main(tensors) -> tensors` into destination-passing
    style: `@<prefix>_forward_impl` takes one memref per argument, aux state
    and output, reads inputs through `bufferization.to_tensor` and writes each
    result with `bufferization.materialize_in_destination`, so bufferization
    computes results straight into the caller's buffers.

    It adds the exported entry point of ABI version 1
      int32_t <prefix>_forward(void *const *buffers, const int64_t *dims, void *workspace);
    `buffers` holds the arguments, then the aux states, then the outputs, in
    the manifest's orders; `dims` holds the values of the dynamic dims;
    `workspace` is the arena (the impl's last argument) for planned buffers.
    The manifest is kept as the `symc.manifest` module attribute for
    sym-embed-manifest.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", "\"symc\"",
           "prefix of the exported symbols (one per artifact linked into a program)">,
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect", "::mlir::LLVM::LLVMDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def SymOutlinePrepare : Pass<"sym-outline-prepare", "::mlir::ModuleOp"> {
  let summary = "Move what the inference forward computes from arguments alone into <prefix>_prepare";
  let description = [{
    Ops marked `symc.prepare` (by the lowering: a convolution's weight
    packed into its kernel's layout) whose result depends only on the
    forward's inputs (arguments and aux states, through their to_tensor and
    pure ops) move out of `<prefix>_forward_impl` into a new
    `<prefix>_prepare_impl(inputs..., prepared..., error, workspace)` and
    its entry point `<prefix>_prepare`, which writes each result into a
    prepared buffer. The forward, and its monitor variant where it computes
    the same array, take the prepared buffers after their outputs and read
    them instead; their entry points are rebuilt. Equal computations share
    one array. The manifest's `prepare` lists the arrays (shape, dtype, the
    inputs each reads, what it is): the runtime runs the prepare entry when
    one of those inputs changed. The training variants keep the marked ops
    inline, and every mark is dropped.
  }];
  let options = [
    Option<"prefix", "prefix", "std::string", "\"symc\"",
           "prefix of the exported symbols">,
  ];
  let dependentDialects = [
    "::mlir::bufferization::BufferizationDialect", "::mlir::LLVM::LLVMDialect"
  ];
}

def SymEmbedManifest : Pass<"sym-embed-manifest", "::mlir::ModuleOp"> {
  let summary = "Embed the manifest and export <prefix>_manifest()";
  let description = [{
    Completes the `symc.manifest` module attribute with the planned
    workspace size (`symc.workspace_bytes`, 0 when absent) and embeds it as a
    constant string returned by `const char *<prefix>_manifest(void)`, with
    the CPU features the code needs (`cpu_features`), which the runtime
    checks before running it, and the device it runs on (`device`: "cpu",
    or "cuda:sm_90" for kernels in PTX for that architecture). With `params-file`, that .params file is
    embedded too, returned by `const uint8_t *<prefix>_params(int64_t
    *size)`, and the manifest says so (`embedded_params`). With
    `shape-variants`, the manifest lists the prefixes under which the same
    symbol is compiled for other shapes into the same artifact
    (`shape_variants`), among which the runtime picks the one that fits the
    shapes bound.
  }];
  let options = [
    ListOption<"cpuFeatures", "cpu-features", "std::string",
               "CPU features the generated code uses (avx2, fma, avx512f, ...)">,
    Option<"device", "device", "std::string", "\"cpu\"",
           "the device the code runs on: cpu, or cuda:<arch>">,
    Option<"paramsFile", "params-file", "std::string", "\"\"",
           ".params file to embed (none when empty)">,
    ListOption<"shapeVariants", "shape-variants", "std::string",
               "prefixes of the symbol compiled for other shapes into the same artifact">,
  ];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def SymMaterializeThroughReshapes : Pass<"sym-materialize-through-reshapes", "::mlir::func::FuncOp"> {
  let summary = "Write a reshaped result through a reshaped view of its output buffer";
  let description = [{
    A result that is a reshape of a value (a weight gradient computed as a
    matrix, expanded to the weight's shape; a saved activation computed in
    strips of 32 channels, which the forward goes on to read) is
    materialized as that value into the output memref reshaped the other
    way, created at the function's entry. Empty-tensor elimination then
    computes the value in the caller's buffer instead of in a workspace
    buffer copied out at the end (which would keep every such result live
    to the end of the function); the reshape's other readers read it there.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def SymPlanMemory : Pass<"sym-plan-memory", "::mlir::ModuleOp"> {
  let summary = "Place the entry's intermediate buffers in the workspace arena";
  let description = [{
    After bufferization, every static-size memref.alloc at the top level of
    the entry implementation becomes a memref.view into the workspace
    argument. Offsets come from liveness: a buffer lives from its allocation
    to the last use of it or of any view of it, and buffers whose lifetimes
    do not overlap share bytes (greedy by size, 64-byte aligned). The arena
    size is recorded as `symc.workspace_bytes`. Run buffer-loop-hoisting
    first so that loop-invariant allocations are at the top level.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def SymDeallocateBuffers : Pass<"sym-deallocate-buffers", "::mlir::ModuleOp"> {
  let summary = "Free the buffers memory planning left allocated";
  let description = [{
    Frees the memref.alloc buffers that remain after sym-plan-memory
    (buffers of a dynamic batch; tiled tensor.pad's padded tiles, which an
    scf.if yields from both branches). Where every one stays within its block
    (through views, its uses nested there, none yielded further, returned or
    passed to a call), each is freed after its last use there. Otherwise
    (or with memref.realloc) MLIR's ownership-based buffer deallocation
    pipeline runs: three canonicalizations of the whole module, which cost
    a deep model's training compile seconds.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

#endif
